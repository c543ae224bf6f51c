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
  duration,
  integer,
  string,
} from '../../validation/validate.js';

/** Options of {@link Bulkhead}. */
export interface BulkheadOptions {
  /** Calls allowed in flight at once, in [1, 2^31-1]. @default 10 */
  readonly maxConcurrent?: number;
  /** Calls allowed to wait for a slot, in [0, 2^31-1]; 0 refuses at once when full. @default 0 */
  readonly maxQueue?: number;
  /** Longest wait in the queue in ms, or Infinity. @default Infinity */
  readonly queueTimeout?: number | DurationString | 'Infinity';
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
  maxQueue: 0,
  queueTimeout: Number.POSITIVE_INFINITY,
  name: 'bulkhead',
});

/** @internal */
export interface ResolvedBulkheadOptions {
  maxConcurrent: number;
  maxQueue: number;
  queueTimeout: number;
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
          ['maxConcurrent', 'maxQueue', 'queueTimeout', 'name', 'clock', 'debug', 'metrics'],
          '',
        );
  const d = bulkheadDefaults;
  return {
    maxConcurrent: integer(o.maxConcurrent, 'maxConcurrent', d.maxConcurrent, 1, MAX_INT32),
    maxQueue: integer(o.maxQueue, 'maxQueue', d.maxQueue, 0, MAX_INT32),
    queueTimeout: duration(o.queueTimeout, 'queueTimeout', d.queueTimeout, 1, true),
    name: string(o.name, 'name', d.name),
    clock: clockOption(o.clock, 'clock', systemClock),
    debug: boolean(o.debug, 'debug', false),
    metrics: resolveMetrics(o.metrics),
  };
}
