import type { Clock } from '../../clock/Clock.js';
import { systemClock } from '../../clock/systemClock.js';
import type { DurationString } from '../../protocol/kind.js';
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
export interface BulkheadOptions {
  /** Calls allowed in flight at once, in [1, 2^31-1]. @default 10 */
  readonly maxConcurrent?: number;
  /** Calls allowed to wait for a slot, in [0, 2^31-1]; 0 refuses at once when full. @default 0 */
  readonly maxQueue?: number;
  /** Longest wait in the queue in ms, or Infinity. @default Infinity */
  readonly queueTimeout?: number | DurationString | 'Infinity';
  /**
   * Which waiting call a freed slot goes to (needs `maxQueue` >= 1 unless `'fifo'`):
   * - `'fifo'`: the oldest.
   * - `'lifo'`: the newest, so in a burst the callers still waiting for an answer are served
   *   and the oldest wait out their `queueTimeout`.
   * - `'codel'`: CoDel with adaptive LIFO. While the queue has emptied within the last
   *   `codelInterval`, the oldest, within `queueTimeout`; once it has stood non-empty for
   *   `codelInterval`, the newest, and calls that waited longer than `codelTarget` are refused
   *   (reason `'codel'`) whenever a call arrives or a slot frees. No admitted call then waits
   *   longer than `codelInterval`.
   * @default 'fifo'
   */
  readonly queue?: BulkheadQueue;
  /**
   * With `queue: 'codel'`: the queue time a call is given while the queue stands, in ms
   * (at least 1, below `codelInterval`). @default 5
   */
  readonly codelTarget?: number | DurationString;
  /**
   * With `queue: 'codel'`: how long the queue may stay non-empty before it counts as standing,
   * in ms (at least 2). @default 100
   */
  readonly codelInterval?: number | DurationString;
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
