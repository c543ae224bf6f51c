import { type ConfigSchema, configSchema, type Duration } from '../../protocol/kind.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';

/** A bulkhead's options as config data. `queueTimeout` accepts `"Infinity"`. */
export interface BulkheadConfig {
  readonly maxConcurrent?: number;
  readonly maxQueue?: number;
  readonly queueTimeout?: Duration;
  readonly queue?: 'fifo' | 'lifo' | 'codel';
  readonly codelTarget?: Duration;
  readonly codelInterval?: Duration;
  readonly debug?: boolean;
  /** See {@link MetricsOptions}: `false`, `true`, or `{ latency: true | n }`. */
  readonly metrics?: boolean | MetricsOptions;
}

/** @internal The keys of a bulkhead's options in config data. */
export const bulkheadSchema: ConfigSchema = configSchema([
  ['maxConcurrent', 'value'],
  ['maxQueue', 'value'],
  ['queueTimeout', 'durationOrInfinity'],
  ['queue', 'value'],
  ['codelTarget', 'duration'],
  ['codelInterval', 'duration'],
  ['debug', 'value'],
  ['metrics', 'metrics'],
]);
