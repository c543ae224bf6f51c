import { defineKind } from '../../protocol/defineKind.js';
import { rejectedKindChannel, rejectedSpanEvent } from '../shared/rejectedEvent.js';
import { CircuitBreaker, controllerOf } from './CircuitBreaker.js';
import { breakerDependsOn, breakerSchema } from './config.js';
import type { BreakerCounts } from './counts.js';
import { stateChangeKindChannel, stateChangeSpanEvent } from './diagnostics.js';
import { BreakerGroup, breakerView } from './keyed.js';
import { breakerMetrics } from './metrics.js';
import {
  type CircuitBreakerOptions,
  type ResolvedBreakerOptions,
  resolveBreakerOptions,
} from './options.js';
import { checkBreakerOptions } from './reconfigure.js';
import type { CircuitBreakerStats } from './stats.js';

/** The circuit breaker kind: what the registry, config data and exporters know of it. */
export const circuitBreakerKind = defineKind<CircuitBreaker, ResolvedBreakerOptions, BreakerCounts>(
  {
    name: 'circuitBreaker',
    label: 'circuit breaker',
    section: 'circuitBreakers',
    policy: CircuitBreaker,
    resolve: (data) => resolveBreakerOptions(data as CircuitBreakerOptions),
    view: breakerView,
    config: {
      schema: breakerSchema,
      codeOnly: ['handle', 'handleResult', 'initialState'],
      dependsOn: breakerDependsOn,
    },
    reconfigure(breaker, options) {
      const c = controllerOf(breaker);
      checkBreakerOptions(breaker, c, options, options.name);
      return () => c.applyOptions(options);
    },
    keyed: (name, options, hooks) => new BreakerGroup(name, options, hooks),
    attach(breaker, name, hooks) {
      // A breaker registered in several registries reports its transitions to the last one.
      controllerOf(breaker).events.setSink((_name, event) =>
        hooks.stateChange(name, undefined, event),
      );
    },
    state: (breaker) => breaker.state,
    restState: 'closed',
    health: (state) =>
      state === 'open' || state === 'forced-open'
        ? 'down'
        : state === 'half-open'
          ? 'degraded'
          : 'ok',
    metrics: breakerMetrics,
    channels: [stateChangeKindChannel, rejectedKindChannel],
    spanEvents: [
      stateChangeSpanEvent,
      rejectedSpanEvent('circuitBreaker', ['open', 'half-open', 'forced-open']),
    ],
    dashboard({ stats }) {
      const s = stats as CircuitBreakerStats;
      return {
        calls: s.successes + s.failures + s.ignored,
        rejected: s.rejections,
        failed: s.failures,
        detail: `${s.failuresInWindow} failed / ${s.callsInWindow} in window${s.slowCallsInWindow ? `, ${s.slowCallsInWindow} slow` : ''}`,
      };
    },
  },
);
