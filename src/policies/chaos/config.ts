import { type ConfigSchema, configSchema, type Duration } from '../../protocol/kind.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';
import type { ChaosStrategy } from './options.js';

/**
 * A chaos step's options as config data (`error`, `behavior`, `random` and an `enabled`
 * function are code only). Switching `enabled` or `rate` in the data and reloading turns an
 * experiment on or off in the pipelines that hold the step.
 */
export interface ChaosConfig {
  /** @default "fault" */
  readonly strategy?: ChaosStrategy;
  readonly rate?: number;
  readonly enabled?: boolean;
  /** A count or `"Infinity"`. */
  readonly maxActive?: number | 'Infinity';
  /** With strategy `latency`. */
  readonly latency?: Duration;
  /** With strategy `outcome`: the value answered, as data. */
  readonly outcome?: unknown;
  /** See {@link MetricsOptions}. */
  readonly metrics?: boolean | MetricsOptions;
}

/** @internal The keys of a chaos step's options in config data. */
export const chaosSchema: ConfigSchema = configSchema([
  ['strategy', 'value'],
  ['rate', 'value'],
  ['enabled', 'value'],
  ['maxActive', 'countOrInfinity'],
  ['latency', 'duration'],
  ['outcome', 'value'],
  ['metrics', 'metrics'],
]);
