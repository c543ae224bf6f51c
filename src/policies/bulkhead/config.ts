import { type ConfigSchema, configSchema } from '../../protocol/kind.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';
import { QUEUE_CONFIG_FIELDS, type QueueConfig } from '../shared/queueConfig.js';

/** A bulkhead's options as config data. `queueTimeout` accepts `"Infinity"`. */
export interface BulkheadConfig extends QueueConfig {
  readonly maxConcurrent?: number;
  readonly debug?: boolean;
  /** See {@link MetricsOptions}: `false`, `true`, or `{ latency: true | n }`. */
  readonly metrics?: boolean | MetricsOptions;
}

/** @internal The keys of a bulkhead's options in config data. */
export const bulkheadSchema: ConfigSchema = configSchema([
  ['maxConcurrent', 'value'],
  ...QUEUE_CONFIG_FIELDS,
  ['debug', 'value'],
  ['metrics', 'metrics'],
]);
