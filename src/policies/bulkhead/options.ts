import type { Clock } from '../../clock/Clock.js';
import { systemClock } from '../../clock/systemClock.js';
import {
  type MetricsOptions,
  type ResolvedMetrics,
  resolveMetrics,
} from '../../telemetry/metrics.js';
import {
  boolean,
  checkOptionsObject,
  clockOption,
  integer,
  string,
} from '../../validation/validate.js';
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
export interface ResolvedBulkheadOptions extends ResolvedQueueOptions {
  maxConcurrent: number;
  name: string;
  clock: Clock;
  debug: boolean;
  metrics: ResolvedMetrics;
}

const MAX_INT32 = 2_147_483_647;

/** @internal */
export function resolveBulkheadOptions(
  options: number | BulkheadOptions | undefined,
): ResolvedBulkheadOptions {
  const o =
    typeof options === 'number'
      ? { maxConcurrent: options }
      : checkOptionsObject(
          options,
          ['maxConcurrent', ...QUEUE_OPTION_KEYS, 'name', 'clock', 'debug', 'metrics'],
          '',
        );
  const d = bulkheadDefaults;
  const queue = resolveQueueOptions(o);
  return {
    maxConcurrent: integer(o.maxConcurrent, 'maxConcurrent', d.maxConcurrent, 1, MAX_INT32),
    ...queue,
    name: string(o.name, 'name', d.name),
    clock: clockOption(o.clock, 'clock', systemClock),
    debug: boolean(o.debug, 'debug', false),
    metrics: resolveMetrics(o.metrics),
  };
}
