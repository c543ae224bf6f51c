import type { ConfigField, Duration } from '../../protocol/kind.js';

/** A queued gate's queue options as config data. `queueTimeout` accepts `"Infinity"`. */
export interface QueueConfig {
  readonly maxQueue?: number;
  readonly queueTimeout?: Duration;
  readonly queue?: 'fifo' | 'lifo' | 'codel';
  readonly codelTarget?: Duration;
  readonly codelInterval?: Duration;
}

/** @internal The queue options' entries in a queued gate's config schema, in order. */
export const QUEUE_CONFIG_FIELDS: readonly (readonly [keyof QueueConfig, ConfigField])[] = [
  ['maxQueue', 'value'],
  ['queueTimeout', 'durationOrInfinity'],
  ['queue', 'value'],
  ['codelTarget', 'duration'],
  ['codelInterval', 'duration'],
];
