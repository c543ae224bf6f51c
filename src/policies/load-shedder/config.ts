import { type ConfigSchema, configSchema, type Duration } from '../../protocol/kind.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';

/** A load shedder's options as config data (`handle`, `handleResult`, `signal` and `random` are code only). */
export interface LoadShedderConfig {
  readonly k?: number;
  readonly window?: Duration;
  readonly maxRefusalRate?: number;
  readonly minRequests?: number;
  readonly debug?: boolean;
  /** See {@link MetricsOptions}. */
  readonly metrics?: boolean | MetricsOptions;
}

/** @internal The keys of a load shedder's options in config data. */
export const loadShedderSchema: ConfigSchema = configSchema([
  ['k', 'value'],
  ['window', 'duration'],
  ['maxRefusalRate', 'value'],
  ['minRequests', 'value'],
  ['debug', 'value'],
  ['metrics', 'metrics'],
]);
