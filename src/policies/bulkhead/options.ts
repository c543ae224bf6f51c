import type { Clock } from '../../clock/Clock.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';
import { checkOptionsObject, integer } from '../../validation/validate.js';
import { MEASURED_KEYS, type ResolvedMeasured, resolveMeasured } from '../shared/commonOptions.js';
import {
  QUEUE_OPTION_KEYS,
  type QueueDiscipline,
  type QueueOptions,
  queueDefaults,
  type ResolvedQueueOptions,
  resolveQueueOptions,
} from '../shared/WaitQueue.js';

/**
 * The order in which a bulkhead admits its waiting calls: `'fifo'` oldest first, `'lifo'`
 * newest first, `'codel'` oldest first until the queue stands (CoDel with adaptive LIFO).
 */
export type BulkheadQueue = QueueDiscipline;

/** Options of {@link Bulkhead}. */
export interface BulkheadOptions extends QueueOptions {
  /** Calls allowed in flight at once, in [1, 2^31-1]. @default 10 */
  readonly maxConcurrent?: number;
  /** Name used in errors and events. @default "bulkhead" */
  readonly name?: string;
  /** @default the system clock */
  readonly clock?: Clock;
  /** Fresh errors with stack traces instead of preallocated ones. @default false */
  readonly debug?: boolean;
  /**
   * What the bulkhead reports to metric exporters; `{ latency: true }` also keeps a latency
   * histogram of the calls it admits (see {@link MetricsOptions}). Read when the bulkhead is
   * built: `reconfigure` cannot change it.
   * @default true (counters; no latency histogram)
   */
  readonly metrics?: boolean | MetricsOptions;
}

/** Defaults of {@link BulkheadOptions}. */
export const bulkheadDefaults = Object.freeze({
  maxConcurrent: 10,
  ...queueDefaults,
  name: 'bulkhead',
});

/** The options after defaults and checks, as the policy keeps them; not exported by name. */
export interface ResolvedBulkheadOptions extends ResolvedQueueOptions, ResolvedMeasured {
  maxConcurrent: number;
}

const MAX_INT32 = 2_147_483_647;

/** @internal */
export function resolveBulkheadOptions(
  options: number | BulkheadOptions | undefined,
): ResolvedBulkheadOptions {
  const o =
    typeof options === 'number'
      ? { maxConcurrent: options }
      : checkOptionsObject(options, ['maxConcurrent', ...QUEUE_OPTION_KEYS, ...MEASURED_KEYS], '');
  const d = bulkheadDefaults;
  const queue = resolveQueueOptions(o);
  return {
    maxConcurrent: integer(o.maxConcurrent, 'maxConcurrent', d.maxConcurrent, 1, MAX_INT32),
    ...queue,
    ...resolveMeasured(o, d.name),
  };
}
