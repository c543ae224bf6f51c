import { defineKind } from '../../protocol/defineKind.js';
import { POLICY_KIND } from '../../protocol/kind.js';
import { AVAILABLE, codeOnlyRedisKind } from '../codeOnlyKind.js';
import { type RedisBulkheadCounts, redisBulkheadMetrics } from './metrics.js';
import type { RedisBulkheadOptions } from './options.js';
import { RedisBulkhead, type RedisBulkheadStats } from './RedisBulkhead.js';

const IN_CODE =
  'a Redis bulkhead is built in code with its client (`new RedisBulkhead({ client, ... })`) and added with `registry.register(name, bulkhead)`';

/**
 * The Redis bulkhead kind: registered bulkheads, and named ones built in code, show in
 * snapshots, `/health` (state `available`, or `fallback` while `onStoreFailure` admits:
 * degraded, never a reason for 503), metrics and the dashboard. Instances come from code
 * only: config data cannot give a client. A bulkhead carries its kind, so a registry learns
 * it from the first one it is handed.
 */
export const redisBulkheadKind = defineKind<
  RedisBulkhead,
  RedisBulkheadOptions,
  RedisBulkheadCounts
>({
  name: 'redisBulkhead',
  label: 'Redis bulkhead',
  section: 'redisBulkheads',
  policy: RedisBulkhead,
  ...codeOnlyRedisKind<RedisBulkhead>(IN_CODE),
  metrics: redisBulkheadMetrics,
  dashboard({ state, stats }) {
    const s = stats as RedisBulkheadStats;
    return {
      calls: s.admitted,
      rejected: s.rejectionsByReason.full + s.rejectionsByReason.queueTimeout,
      levels: { 'in flight here': s.inFlight, limit: s.maxConcurrent, queued: s.queueLength },
      levelsLabel: 'calls in flight',
      detail:
        `${state === AVAILABLE ? 'Redis answers' : 'Redis away: admitting by onStoreFailure'}, ` +
        `${s.inFlight} in flight here of ${s.maxConcurrent} shared, ${s.queueLength} waiting, ` +
        `${s.liveInstances} live instances, ${s.permitsLost} permits lost`,
    };
  },
});

// A registry learns the kind from a bulkhead it is handed, so `kinds` need not name it.
Object.defineProperty(RedisBulkhead.prototype, POLICY_KIND, { value: redisBulkheadKind });
