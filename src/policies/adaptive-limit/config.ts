import type { Criticality } from '../../protocol/criticality.js';
import { type ConfigSchema, configSchema, type Duration } from '../../protocol/kind.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';
import { QUEUE_CONFIG_FIELDS, type QueueConfig } from '../shared/queueConfig.js';

/**
 * An adaptive limit's algorithm in config data: `kind` picks the fields that apply (see
 * `GradientOptions`, `VegasOptions`, `AimdOptions`); a function is code only.
 */
export interface AdaptiveAlgorithmConfig {
  readonly kind?: 'gradient' | 'vegas' | 'aimd';
  /** gradient */
  readonly tolerance?: number;
  readonly growth?: number;
  /** vegas */
  readonly alpha?: number;
  readonly beta?: number;
  /** aimd */
  readonly backoffRatio?: number;
  readonly increase?: number;
  readonly maxLatency?: Duration;
}

/**
 * An adaptive limit's options as config data (`handle`, `handleResult` and a function
 * `algorithm` are code only). Durations take `"30s"` or ms; `queueTimeout` and the AIMD
 * `maxLatency` accept `"Infinity"`.
 */
export interface AdaptiveLimitConfig extends QueueConfig {
  /** An algorithm by name (`"vegas"`), or with its settings. */
  readonly algorithm?: 'gradient' | 'vegas' | 'aimd' | AdaptiveAlgorithmConfig;
  readonly initialLimit?: number;
  readonly minLimit?: number;
  readonly maxLimit?: number;
  readonly minWindow?: Duration;
  readonly maxWindow?: Duration;
  readonly minSamples?: number;
  readonly partitions?: { readonly [C in Criticality]?: number };
  readonly deadlineRefusal?: boolean;
  readonly debug?: boolean;
  /** See {@link MetricsOptions}. */
  readonly metrics?: boolean | MetricsOptions;
}

/** @internal The keys of an adaptive limit's options in config data. */
export const adaptiveLimitSchema: ConfigSchema = configSchema([
  [
    'algorithm',
    {
      fields: configSchema([
        ['kind', 'value'],
        ['tolerance', 'value'],
        ['growth', 'value'],
        ['alpha', 'value'],
        ['beta', 'value'],
        ['backoffRatio', 'value'],
        ['increase', 'value'],
        ['maxLatency', 'durationOrInfinity'],
      ]),
      variants: new Map([
        ['gradient', ['kind', 'tolerance', 'growth']],
        ['vegas', ['kind', 'alpha', 'beta']],
        ['aimd', ['kind', 'backoffRatio', 'increase', 'maxLatency']],
      ]),
      byName: true,
    },
  ],
  ['initialLimit', 'value'],
  ['minLimit', 'value'],
  ['maxLimit', 'value'],
  ['minWindow', 'duration'],
  ['maxWindow', 'duration'],
  ['minSamples', 'value'],
  [
    'partitions',
    configSchema([
      ['critical-plus', 'value'],
      ['critical', 'value'],
      ['sheddable-plus', 'value'],
      ['sheddable', 'value'],
    ]),
  ],
  ['deadlineRefusal', 'value'],
  ...QUEUE_CONFIG_FIELDS,
  ['debug', 'value'],
  ['metrics', 'metrics'],
]);
