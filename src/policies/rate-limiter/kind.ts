import { defineKind } from '../../protocol/defineKind.js';
import { rejectedKindChannel, rejectedSpanEvent } from '../shared/rejectedEvent.js';
import {
  checkRateData,
  mergeRate,
  missingRate,
  rateLimiterDependsOn,
  rateLimiterSchema,
} from './config.js';
import { RateLimiterGroup, rateLimiterView } from './keyed.js';
import { type RateLimiterCounts, rateLimiterMetrics } from './metrics.js';
import {
  type RateLimiterOptions,
  type ResolvedRateLimiterOptions,
  resolveRateLimiterOptions,
} from './options.js';
import { RateLimiter } from './RateLimiter.js';
import type { RateLimiterStats } from './stats.js';

/** The rate limiter kind: what the registry, config data and exporters know of it. */
export const rateLimiterKind = defineKind<
  RateLimiter,
  ResolvedRateLimiterOptions,
  RateLimiterCounts
>({
  name: 'rateLimiter',
  label: 'rate limiter',
  section: 'rateLimiters',
  decoratorName: 'rateLimit',
  policy: RateLimiter,
  resolve: (data) => resolveRateLimiterOptions(data as RateLimiterOptions),
  view: rateLimiterView,
  config: {
    schema: rateLimiterSchema,
    check: checkRateData,
    missing: missingRate,
    merge: mergeRate,
    dependsOn: rateLimiterDependsOn,
  },
  keyed: (name, options) => new RateLimiterGroup(name, options),
  metrics: rateLimiterMetrics,
  channels: [rejectedKindChannel],
  spanEvents: [rejectedSpanEvent('rateLimiter', ['rate-limited'])],
  dashboard({ stats }) {
    const s = stats as RateLimiterStats;
    return {
      calls: s.admitted,
      rejected: s.rejected,
      levels: { available: s.available, burst: s.burst },
      levelsLabel: 'permits',
      detail: `${s.available} / ${s.burst} available${s.waiting ? `, ${s.waiting} waiting` : ''}`,
    };
  },
});
