import { type ConfigSchema, configSchema, type Duration } from '../../protocol/kind.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';

/**
 * A breaker's window in config data. `kind` picks the fields that apply (see
 * `WindowOptions`); in a named entry it may be left out to keep the kind of the default
 * window and change some of its fields.
 */
export interface WindowConfig {
  readonly kind?: 'consecutive' | 'count' | 'time';
  /** consecutive: failures in a row that open the breaker. */
  readonly threshold?: number;
  /** count: calls remembered. */
  readonly size?: number;
  /** count and time: calls needed before a rate is judged. */
  readonly minimumCalls?: number;
  /** time: the window's length. */
  readonly duration?: Duration;
  /** time: slices the window is kept in. */
  readonly buckets?: number;
}

/** A circuit breaker's options as config data (no functions, no clock, no initial state). */
export interface CircuitBreakerConfig {
  readonly window?: WindowConfig;
  readonly failureRateThreshold?: number;
  /** Rate windows: failures in a row that open the breaker whatever the rate. */
  readonly consecutiveFailures?: number;
  readonly slowCallDuration?: Duration;
  readonly slowCallRateThreshold?: number;
  readonly breakDuration?: Duration;
  readonly breakBackoff?: {
    readonly multiplier?: number;
    readonly maxDuration?: Duration;
    readonly decay?: Duration;
  };
  readonly halfOpen?: {
    readonly probes?: number;
    readonly maxConcurrent?: number;
    readonly successRatio?: number;
    readonly maxWait?: Duration;
  };
  readonly debug?: boolean;
  /** See {@link MetricsOptions}: `false`, `true`, or `{ latency: true | n }`. */
  readonly metrics?: boolean | MetricsOptions;
}

/** @internal The keys of a breaker's options in config data. */
export const breakerSchema: ConfigSchema = configSchema([
  [
    'window',
    {
      fields: configSchema([
        ['kind', 'value'],
        ['threshold', 'value'],
        ['size', 'value'],
        ['minimumCalls', 'value'],
        ['duration', 'duration'],
        ['buckets', 'value'],
      ]),
      variants: new Map([
        ['consecutive', ['kind', 'threshold']],
        ['count', ['kind', 'size', 'minimumCalls']],
        ['time', ['kind', 'duration', 'buckets', 'minimumCalls']],
      ]),
    },
  ],
  ['failureRateThreshold', 'value'],
  ['consecutiveFailures', 'value'],
  ['slowCallDuration', 'durationOrInfinity'],
  ['slowCallRateThreshold', 'value'],
  ['breakDuration', 'duration'],
  [
    'breakBackoff',
    configSchema([
      ['multiplier', 'value'],
      ['maxDuration', 'duration'],
      ['decay', 'duration'],
    ]),
  ],
  [
    'halfOpen',
    configSchema([
      ['probes', 'value'],
      ['maxConcurrent', 'value'],
      ['successRatio', 'value'],
      ['maxWait', 'duration'],
    ]),
  ],
  ['debug', 'value'],
  ['metrics', 'metrics'],
]);

/** @internal Option paths whose valid range depends on others. */
export const breakerDependsOn: ReadonlyMap<string, readonly string[]> = new Map([
  ['halfOpen.maxConcurrent', ['halfOpen.probes']],
  ['breakBackoff.maxDuration', ['breakDuration']],
  ['breakBackoff.decay', ['breakDuration']],
  ['window.minimumCalls', ['window.size', 'window.kind']],
  ['window.buckets', ['window.duration', 'window.kind']],
  ['window.duration', ['window.buckets', 'window.kind']],
  ['window.threshold', ['window.kind']],
  ['window.size', ['window.kind']],
]);
