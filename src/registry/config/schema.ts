import type { RegistryKind } from './types.js';

/**
 * @internal How a key's value is read: as is, as a duration, or as a nested object.
 */
export type Field =
  | 'value'
  | 'duration'
  | 'durationOrInfinity'
  | 'countOrInfinity'
  | 'window'
  | 'metrics'
  | Schema;
/** @internal The keys an object of config data may have, and how each is read. */
// Maps, not object literals: lookups by keys taken from the data never reach a prototype.
export type Schema = ReadonlyMap<string, Field>;

const schema = (fields: [string, Field][]): Schema => new Map(fields);

/** @internal Every key a breaker's `window` may have, whatever its kind. */
export const WINDOW: Schema = schema([
  ['kind', 'value'],
  ['threshold', 'value'],
  ['size', 'value'],
  ['minimumCalls', 'value'],
  ['duration', 'duration'],
  ['buckets', 'value'],
]);

/** @internal `metrics` is a boolean or an object of these fields. */
export const METRICS: Schema = schema([['latency', 'value']]);

/** @internal The keys each kind of window takes. */
export const WINDOW_FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  ['consecutive', ['kind', 'threshold']],
  ['count', ['kind', 'size', 'minimumCalls']],
  ['time', ['kind', 'duration', 'buckets', 'minimumCalls']],
]);

/** @internal The options of each kind, in `defaults` and in its section. */
export const SCHEMAS: ReadonlyMap<RegistryKind, Schema> = new Map([
  [
    'circuitBreaker',
    schema([
      ['window', 'window'],
      ['failureRateThreshold', 'value'],
      ['slowCallDuration', 'duration'],
      ['slowCallRateThreshold', 'value'],
      ['breakDuration', 'duration'],
      [
        'breakBackoff',
        schema([
          ['multiplier', 'value'],
          ['maxDuration', 'duration'],
        ]),
      ],
      [
        'halfOpen',
        schema([
          ['probes', 'value'],
          ['maxConcurrent', 'value'],
          ['successRatio', 'value'],
          ['maxWait', 'duration'],
        ]),
      ],
      ['debug', 'value'],
      ['metrics', 'metrics'],
    ]),
  ],
  [
    'retry',
    schema([
      ['maxAttempts', 'countOrInfinity'],
      ['maxDuration', 'durationOrInfinity'],
      ['backoff', 'value'],
      ['delay', 'duration'],
      ['maxDelay', 'duration'],
      ['multiplier', 'value'],
      ['jitter', 'value'],
    ]),
  ],
  [
    'timeout',
    schema([
      ['timeout', 'duration'],
      ['strategy', 'value'],
      ['debug', 'value'],
    ]),
  ],
  [
    'bulkhead',
    schema([
      ['maxConcurrent', 'value'],
      ['maxQueue', 'value'],
      ['queueTimeout', 'durationOrInfinity'],
      ['debug', 'value'],
      ['metrics', 'metrics'],
    ]),
  ],
  [
    'rateLimiter',
    schema([
      ['limit', 'value'],
      ['period', 'duration'],
      ['burst', 'value'],
      ['capacity', 'value'],
      ['refillRate', 'value'],
      ['permits', 'value'],
      ['maxWait', 'duration'],
      ['debug', 'value'],
    ]),
  ],
]);

/** @internal The `keys` section. */
export const KEYS: Schema = schema([
  ['maxKeys', 'value'],
  ['idleTimeout', 'durationOrInfinity'],
]);

/** @internal Config section of each kind's named instances. */
export const SECTION_OF: ReadonlyMap<RegistryKind, string> = new Map([
  ['circuitBreaker', 'circuitBreakers'],
  ['retry', 'retries'],
  ['timeout', 'timeouts'],
  ['bulkhead', 'bulkheads'],
  ['rateLimiter', 'rateLimiters'],
]);

/** @internal The kind whose named instances a section holds. */
export const KIND_OF_SECTION: ReadonlyMap<string, RegistryKind> = new Map(
  [...SECTION_OF].map(([kind, section]) => [section, kind]),
);

/** @internal The kinds, as `defaults` names them. */
export const KINDS: readonly RegistryKind[] = [
  'circuitBreaker',
  'retry',
  'timeout',
  'bulkhead',
  'rateLimiter',
];
/** @internal The keys of the config data itself. */
export const TOP_KEYS = [
  'defaults',
  'circuitBreakers',
  'retries',
  'timeouts',
  'bulkheads',
  'rateLimiters',
  'keys',
];

/** @internal Keys that could reach an object's prototype if they were ever assigned through. */
export const FORBIDDEN: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** @internal Options that exist in code but cannot come from data. */
export const CODE_ONLY: ReadonlySet<string> = new Set([
  'clock',
  'handle',
  'handleResult',
  'initialState',
  'random',
  'retryAfter',
]);
