import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  CircuitBreaker,
  ErrorCode,
  Fallback,
  OptionsError,
  type Policy,
  pipeline,
  Retry,
  Timeout,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { optionsError } from '../support/errors.js';

// ---- what each options object accepts -------------------------------------------------------

const RETRY_KEYS = [
  'maxAttempts',
  'maxDuration',
  'backoff',
  'delay',
  'maxDelay',
  'multiplier',
  'jitter',
  'random',
  'handle',
  'handleResult',
  'lastResult',
  'retryAfter',
  'name',
  'clock',
];
const TIMEOUT_KEYS = ['timeout', 'strategy', 'name', 'clock', 'debug'];
const BULKHEAD_KEYS = ['maxConcurrent', 'maxQueue', 'queueTimeout', 'name', 'clock', 'debug'];
const FALLBACK_KEYS = ['value', 'action', 'handle', 'handleResult', 'name'];
const BREAKER_KEYS = [
  'name',
  'window',
  'failureRateThreshold',
  'slowCallDuration',
  'slowCallRateThreshold',
  'breakDuration',
  'breakBackoff',
  'halfOpen',
  'handle',
  'handleResult',
  'initialState',
  'clock',
  'debug',
];
const BREAKER_PATHS = [
  ...BREAKER_KEYS,
  'window.kind',
  'window.threshold',
  'window.size',
  'window.minimumCalls',
  'window.duration',
  'window.buckets',
  'breakBackoff.multiplier',
  'breakBackoff.maxDuration',
  'halfOpen.probes',
  'halfOpen.maxConcurrent',
  'halfOpen.successRatio',
  'halfOpen.maxWait',
];

interface Subject {
  readonly label: string;
  /** Every option path the policy knows. */
  readonly paths: readonly string[];
  /** Paths an error may name although the input does not hold them (required options). */
  required(input: unknown): string[];
  make(input: unknown): Policy;
  /** The same input with a ManualClock in place of the clock, for running a call. */
  withClock(input: unknown, clock: ManualClock): unknown;
}

const objectOrEmpty = (input: unknown): Record<string, unknown> =>
  typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};

const retrySubject: Subject = {
  label: 'RetryOptions',
  paths: RETRY_KEYS,
  required: () => [],
  make: (input) => new Retry(input as never),
  withClock: (input, clock) => ({ ...objectOrEmpty(input), clock }),
};
const timeoutSubject: Subject = {
  label: 'TimeoutOptions',
  paths: TIMEOUT_KEYS,
  required: () => ['timeout'],
  make: (input) => new Timeout(input as never),
  withClock: (input, clock) =>
    typeof input === 'number' ? { timeout: input, clock } : { ...objectOrEmpty(input), clock },
};
const bulkheadSubject: Subject = {
  label: 'BulkheadOptions',
  paths: BULKHEAD_KEYS,
  required: () => [],
  make: (input) => new Bulkhead(input as never),
  withClock: (input, clock) =>
    typeof input === 'number'
      ? { maxConcurrent: input, clock }
      : { ...objectOrEmpty(input), clock },
};
const fallbackSubject: Subject = {
  label: 'FallbackOptions',
  paths: FALLBACK_KEYS,
  required: () => ['value'],
  make: (input) => new Fallback(input as never),
  withClock: (input) => input,
};
const breakerSubject: Subject = {
  label: 'CircuitBreakerOptions',
  paths: BREAKER_PATHS,
  required: (input) => {
    const w = objectOrEmpty(input).window;
    return typeof w === 'object' && w !== null ? ['window.kind'] : [];
  },
  make: (input) => new CircuitBreaker(input as never),
  withClock: (input, clock) => ({ ...objectOrEmpty(input), clock }),
};

// ---- the property ---------------------------------------------------------------------------

/** True when `path` (dotted; keys may hold dots themselves) names an own property of `input`. */
function hasPath(input: unknown, path: string): boolean {
  if (typeof input !== 'object' || input === null) return false;
  if (Object.hasOwn(input, path)) return true;
  return Object.keys(input).some(
    (key) =>
      path.startsWith(`${key}.`) &&
      hasPath((input as Record<string, unknown>)[key], path.slice(key.length + 1)),
  );
}

/** The value at `path` in `input` (see {@link hasPath}). */
function valueAt(input: unknown, path: string): unknown {
  const o = input as Record<string, unknown>;
  if (Object.hasOwn(o, path)) return o[path];
  for (const key of Object.keys(o)) {
    if (path.startsWith(`${key}.`) && hasPath(o[key], path.slice(key.length + 1))) {
      return valueAt(o[key], path.slice(key.length + 1));
    }
  }
  return undefined;
}

const isOptionsObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Constructing succeeds, or throws an OptionsError (the real class, not just the brand) with
 * the stable code, an "Expected ..." message, and an option path that the input holds (or
 * that is required and missing). Returns the policy when construction succeeded.
 */
function construct(subject: Subject, input: unknown): Policy | undefined {
  let error: unknown;
  try {
    return subject.make(input);
  } catch (e) {
    error = e;
  }
  expect(Object.getPrototypeOf(error)).toBe(OptionsError.prototype);
  const e = error as OptionsError;
  expect(e).toBeInstanceOf(OptionsError);
  expect(e.code).toBe(ErrorCode.InvalidOption);
  expect(e.message).toContain('Expected');
  expect(typeof e.option).toBe('string');
  if (e.option === 'options') {
    // The options argument itself was not an options object.
    expect(isOptionsObject(input)).toBe(false);
    expect(e.value).toBe(input);
    return undefined;
  }
  if (e.message.includes('it is not a known option')) {
    expect(hasPath(input, e.option), `unknown option ${e.option} is in the input`).toBe(true);
    expect(Object.is(e.value, valueAt(input, e.option))).toBe(true);
    return undefined;
  }
  expect(subject.paths, `${e.option} is an option of ${subject.label}`).toContain(e.option);
  const present = hasPath(input, e.option);
  if (present) {
    expect(Object.is(e.value, valueAt(input, e.option)), `value of ${e.option}`).toBe(true);
  } else if (typeof input !== 'number') {
    expect(subject.required(input), `${e.option} is in the input or required`).toContain(e.option);
  }
  return undefined;
}

/** A policy built from accepted options runs a call to the end. */
async function runsOneCall(subject: Subject, input: unknown): Promise<void> {
  const clock = new ManualClock();
  const policy = subject.make(subject.withClock(input, clock));
  const controller = new AbortController();
  let settled = false;
  const done = pipeline(policy)
    .execute(
      ({ attempt }) => {
        if (attempt === 1) throw new Error('first attempt fails');
        return 'ok';
      },
      { signal: controller.signal },
    )
    .then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
  // Options may legitimately retry without end (maxAttempts: Infinity); the caller's signal
  // must still end the call then.
  await clock.runAll(200).catch(() => {});
  if (!settled) controller.abort(new Error('enough'));
  await clock.runAll(200).catch(() => {});
  await done;
  expect(settled).toBe(true);
  policy.dispose();
  expect(clock.pendingTimers).toBe(0);
}

async function check(subject: Subject, input: unknown): Promise<void> {
  const policy = construct(subject, input);
  if (policy !== undefined) await runsOneCall(subject, input);
}

// ---- arbitraries ----------------------------------------------------------------------------

const specialNumbers = fc.constantFrom(
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  -1,
  0,
  -0,
  0.5,
  1,
  1.5,
  2,
  3,
  100,
  1000,
  2_147_483_647,
  2_147_483_648,
  -2_147_483_648,
  1_000_000,
  1_000_001,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  Number.EPSILON,
  1e21,
);
const anyNumber = fc.oneof(
  specialNumbers,
  fc.double(),
  fc.integer({ min: -10, max: 200 }),
  fc.integer(),
);
const likelyStrings = fc.constantFrom(
  '',
  ' ',
  'none',
  'full',
  'equal',
  'decorrelated',
  'constant',
  'linear',
  'exponential',
  'cooperative',
  'aggressive',
  'consecutive',
  'count',
  'time',
  'closed',
  'open',
  '100',
  'NaN',
);
const nestedGarbage = fc.oneof(
  fc.object({ maxDepth: 2, maxKeys: 3 }),
  fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 3 }),
);
/** Any value of any type, biased towards the edges validators must catch. */
const garbage: fc.Arbitrary<unknown> = fc.oneof(
  anyNumber,
  anyNumber,
  fc.string({ maxLength: 8 }),
  likelyStrings,
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  nestedGarbage,
  fc.func(fc.anything({ maxDepth: 1 })),
  fc.bigInt(),
  fc.constant(Symbol('opt')),
  fc.constant(new Date(0)),
);
/** An option: a valid value most of the time, garbage otherwise. */
const field = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 3, arbitrary: valid as fc.Arbitrary<unknown> },
    { weight: 2, arbitrary: garbage },
  );
const clockArb = fc.constant(null).map(() => new ManualClock());
const predicate = fc.func(fc.boolean());
const nameArb = fc.string({ minLength: 1, maxLength: 10 });

/** Extra keys that are no option anywhere, typos included. */
const unknownKey = fc
  .oneof(
    fc.stringMatching(/^[A-Za-z_$][\w$]{0,10}$/),
    fc.constantFrom('breakDurtion', 'maxAttempt', 'dealy', 'timout', 'probe', 'Window', 'retries'),
  )
  .filter(
    (k) =>
      !BREAKER_PATHS.includes(k) &&
      ![...RETRY_KEYS, ...TIMEOUT_KEYS, ...BULKHEAD_KEYS, ...FALLBACK_KEYS].includes(k),
  );

/** `record` plus, sometimes, unknown keys with garbage values. */
function withExtras(record: fc.Arbitrary<Record<string, unknown>>) {
  return fc
    .tuple(
      record,
      fc.oneof(
        { weight: 4, arbitrary: fc.constant({}) },
        { weight: 1, arbitrary: fc.dictionary(unknownKey, garbage, { maxKeys: 2 }) },
      ),
    )
    .map(([r, extra]) => ({ ...r, ...extra }));
}

const opt = { requiredKeys: [] as never[] };

/** How a builder below makes a field and an options record: mixed with garbage, or valid only. */
interface Mode {
  readonly f: (valid: fc.Arbitrary<unknown>) => fc.Arbitrary<unknown>;
  readonly x: (
    record: fc.Arbitrary<Record<string, unknown>>,
  ) => fc.Arbitrary<Record<string, unknown>>;
  readonly valid: boolean;
}
const MIXED: Mode = { f: field, x: withExtras, valid: false };
const VALID: Mode = { f: (a) => a, x: (r) => r, valid: true };

const retryOptions = ({ f, x, valid }: Mode) =>
  x(
    fc
      .record(
        {
          maxAttempts: f(
            fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constant(Number.POSITIVE_INFINITY)),
          ),
          maxDuration: f(
            fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constant(Number.POSITIVE_INFINITY)),
          ),
          backoff: f(fc.constantFrom('constant', 'linear', 'exponential', 'decorrelated')),
          delay: f(fc.double({ min: 0, max: 10_000, noNaN: true })),
          maxDelay: f(fc.integer({ min: 10_000, max: 2_147_483_647 })),
          multiplier: f(fc.double({ min: 1, max: 100, noNaN: true })),
          jitter: f(fc.constantFrom('none', 'full', 'equal', 'decorrelated')),
          random: f(fc.func(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }))),
          handle: f(predicate),
          handleResult: f(predicate),
          retryAfter: f(fc.func(fc.option(fc.integer({ min: -5, max: 5000 }), { nil: undefined }))),
          name: f(nameArb),
          clock: f(clockArb),
        },
        opt,
      )
      // Unbounded attempts are valid only with a finite maxDuration.
      .map((r: Record<string, unknown>) =>
        valid && r.maxAttempts === Number.POSITIVE_INFINITY && !Number.isFinite(r.maxDuration)
          ? { ...r, maxDuration: 10_000 }
          : r,
      ),
  );

const timeoutOptions = ({ f, x, valid }: Mode) =>
  fc.oneof(
    f(fc.integer({ min: 1, max: 2_147_483_647 })),
    x(
      fc.record(
        {
          timeout: f(fc.double({ min: 1, max: 2_147_483_647, noNaN: true })),
          strategy: f(fc.constantFrom('cooperative', 'aggressive')),
          name: f(nameArb),
          clock: f(clockArb),
          debug: f(fc.boolean()),
        },
        { requiredKeys: ['timeout'] },
      ),
    ),
    // No timeout at all.
    ...(valid
      ? []
      : [x(fc.record({ strategy: f(fc.constantFrom('cooperative', 'aggressive')) }, opt))]),
  );

const bulkheadOptions = ({ f, x }: Mode) =>
  fc.oneof(
    f(fc.integer({ min: 1, max: 100 })),
    x(
      fc.record(
        {
          maxConcurrent: f(fc.integer({ min: 1, max: 2_147_483_647 })),
          maxQueue: f(fc.integer({ min: 0, max: 2_147_483_647 })),
          queueTimeout: f(
            fc.oneof(
              fc.integer({ min: 1, max: 2_147_483_647 }),
              fc.constant(Number.POSITIVE_INFINITY),
            ),
          ),
          name: f(nameArb),
          clock: f(clockArb),
          debug: f(fc.boolean()),
        },
        opt,
      ),
    ),
  );

const fallbackOptions = ({ f, x, valid }: Mode) => {
  const common = {
    handle: f(predicate),
    handleResult: f(predicate),
    name: f(nameArb),
  };
  const withValue = fc.record({ value: garbage, ...common }, { requiredKeys: ['value'] });
  const withAction = fc.record(
    { action: f(fc.func(fc.anything({ maxDepth: 1 }))), ...common },
    { requiredKeys: ['action'] },
  );
  if (valid) return fc.oneof(withValue, withAction);
  // Both, neither, or one of them.
  return x(fc.record({ value: garbage, action: f(fc.func(fc.anything())), ...common }, opt));
};

const windowArb = ({ f, x, valid }: Mode) => {
  const kinds = [
    x(
      fc.record(
        {
          kind: f(fc.constant('consecutive')),
          threshold: f(fc.integer({ min: 1, max: 20 })),
        },
        { requiredKeys: ['kind'] },
      ),
    ),
    x(
      fc
        .record(
          {
            kind: f(fc.constant('count')),
            size: f(fc.integer({ min: 1, max: 500 })),
            minimumCalls: f(fc.integer({ min: 1, max: 500 })),
          },
          { requiredKeys: ['kind'] },
        )
        .map((w) =>
          // A valid count window holds minimumCalls <= size (default size 100).
          valid && typeof w.minimumCalls === 'number'
            ? { ...w, size: Math.max(w.minimumCalls, (w.size as number | undefined) ?? 100) }
            : w,
        ),
    ),
    x(
      fc.record(
        {
          kind: f(fc.constant('time')),
          // Windows under 10 ms are fuzzed on their own, below.
          duration: f(fc.integer({ min: 1000, max: 1_000_000 })),
          buckets: f(fc.integer({ min: 1, max: 1000 })),
          minimumCalls: f(fc.integer({ min: 1, max: 1000 })),
        },
        { requiredKeys: ['kind'] },
      ),
    ),
  ];
  if (valid) return fc.oneof(...kinds);
  // Keys of one window kind under another, or no kind at all.
  const crossed = fc.record(
    {
      kind: fc.constantFrom('consecutive', 'count', 'time'),
      threshold: f(fc.integer({ min: 1, max: 20 })),
      size: f(fc.integer({ min: 1, max: 500 })),
      buckets: f(fc.integer({ min: 1, max: 1000 })),
    },
    opt,
  );
  return f(fc.oneof(...kinds, crossed));
};

const STATES = ['closed', 'open', 'half-open', 'disabled', 'forced-open', 'metrics-only'];
const WINDOW_DATA = {
  consecutive: [2, 0],
  count: [0, 1, 0, 1],
  time: [[0, 4, 1, 0]],
} as const;

/** A snapshot whose header fields may be garbage but whose window data has the right shape. */
const shapedSnapshot = ({ f }: Mode) =>
  fc
    .record({
      version: f(fc.constant(1)),
      state: f(fc.constantFrom(...STATES)),
      openRemaining: f(fc.integer({ min: 0, max: 100_000 })),
      consecutiveOpens: f(fc.integer({ min: 0, max: 10 })),
      window: f(fc.constantFrom('consecutive', 'count', 'time')),
    })
    .map((s) => {
      const kind = s.window;
      if (kind !== 'consecutive' && kind !== 'count' && kind !== 'time') return s;
      return { ...s, window: { kind, data: WINDOW_DATA[kind] } };
    });

function breakerOptions(mode: Mode) {
  const { f, x, valid } = mode;
  const halfOpen = fc
    .record(
      {
        probes: f(fc.integer({ min: 1, max: 10 })),
        maxConcurrent: f(fc.integer({ min: 1, max: 10 })),
        successRatio: f(fc.double({ min: 0.01, max: 1, noNaN: true })),
        maxWait: f(fc.integer({ min: 1, max: 2_147_483_647 })),
      },
      opt,
    )
    .map((h) =>
      // A valid halfOpen holds maxConcurrent <= probes (default probes 1).
      valid && typeof h.maxConcurrent === 'number'
        ? { ...h, probes: Math.max(h.maxConcurrent, (h.probes as number | undefined) ?? 1) }
        : h,
    );
  const records = fc.record(
    {
      name: f(nameArb),
      window: windowArb(mode),
      failureRateThreshold: f(fc.double({ min: 0.01, max: 1, noNaN: true })),
      slowCallDuration: f(
        fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constant(Number.POSITIVE_INFINITY)),
      ),
      slowCallRateThreshold: f(fc.double({ min: 0.01, max: 1, noNaN: true })),
      breakDuration: f(fc.integer({ min: 1, max: 100_000 })),
      breakBackoff: f(
        x(
          fc.record(
            {
              multiplier: f(fc.double({ min: 1, max: 1000, noNaN: true })),
              maxDuration: f(fc.integer({ min: 100_000, max: 2_147_483_647 })),
            },
            opt,
          ),
        ),
      ),
      halfOpen: f(x(halfOpen)),
      handle: f(predicate),
      handleResult: f(predicate),
      initialState: fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 3, arbitrary: shapedSnapshot(mode) },
        { weight: valid ? 0 : 1, arbitrary: garbage },
      ),
      clock: f(clockArb),
      debug: f(fc.boolean()),
    },
    opt,
  );
  return x(
    valid
      ? records.map((r) => {
          // A valid snapshot belongs to a breaker with the same window kind.
          const s = r.initialState as { window?: { kind: string } } | undefined;
          if (s === undefined) return r;
          const kind = ((r.window as { kind?: string } | undefined)?.kind ??
            'count') as keyof typeof WINDOW_DATA;
          return { ...r, initialState: { ...s, window: { kind, data: WINDOW_DATA[kind] } } };
        })
      : records,
  );
}

const RUNS = { numRuns: 400 };

// ---- fuzzing --------------------------------------------------------------------------------

const subjects = [
  ['RetryOptions', retrySubject, retryOptions],
  ['TimeoutOptions (object or number)', timeoutSubject, timeoutOptions],
  ['BulkheadOptions (object or number)', bulkheadSubject, bulkheadOptions],
  ['FallbackOptions', fallbackSubject, fallbackOptions],
  [
    'CircuitBreakerOptions (windows of at least 1 s, halfOpen, breakBackoff, snapshots)',
    breakerSubject,
    breakerOptions,
  ],
] as const;

describe('config fuzzing: construction succeeds or throws a precise OptionsError', () => {
  it.each(subjects)('%s with garbage mixed into every field', async (_label, subject, arb) => {
    await fc.assert(
      fc.asyncProperty(arb(MIXED) as fc.Arbitrary<unknown>, (input) => check(subject, input)),
      RUNS,
    );
  });

  it.each(subjects)(
    '%s with valid values only: accepted, and a call runs',
    async (_label, subject, arb) => {
      await fc.assert(
        fc.asyncProperty(arb(VALID) as fc.Arbitrary<unknown>, async (input) => {
          const policy = construct(subject, input);
          expect(policy, 'valid options are accepted').toBeDefined();
          await runsOneCall(subject, input);
        }),
        RUNS,
      );
    },
  );

  it('CircuitBreakerOptions with time windows under 10 ms', async () => {
    await fc.assert(
      fc.asyncProperty(
        withExtras(
          fc.record(
            {
              kind: fc.constant('time'),
              duration: field(fc.integer({ min: 1, max: 20 })),
              buckets: field(fc.integer({ min: 1, max: 20 })),
              minimumCalls: field(fc.integer({ min: 1, max: 1000 })),
            },
            { requiredKeys: ['kind'] },
          ),
        ),
        (window) => check(breakerSubject, { window }),
      ),
      RUNS,
    );
  });

  it('CircuitBreakerOptions initialState with garbage window data', async () => {
    const snapshot = fc.record({
      version: fc.constant(1),
      state: fc.constantFrom(...STATES),
      openRemaining: fc.integer({ min: 0, max: 1000 }),
      consecutiveOpens: garbage,
      window: fc.record({ kind: fc.constantFrom('consecutive', 'count', 'time'), data: garbage }),
    });
    await fc.assert(
      fc.asyncProperty(snapshot, (initialState) =>
        check(breakerSubject, { window: { kind: initialState.window.kind }, initialState }),
      ),
      RUNS,
    );
  });

  it.each(subjects)('%s given as a value of any type', async (_label, subject) => {
    await fc.assert(
      fc.asyncProperty(garbage, (input) => check(subject, input)),
      RUNS,
    );
  });
});

// ---- tables ---------------------------------------------------------------------------------

type Row = [label: string, make: () => unknown, option: string, expected: string];

function expectOptionsError(make: () => unknown, option: string, fragment: string): OptionsError {
  let error: unknown;
  try {
    make();
  } catch (e) {
    error = e;
  }
  expect(error, `constructing should throw for ${option}`).toBeInstanceOf(OptionsError);
  const e = error as OptionsError;
  expect(e.code).toBe(ErrorCode.InvalidOption);
  expect(e.option).toBe(option);
  expect(e.message).toMatch(new RegExp(`^Expected \`${option.replace(/\./g, '\\.')}\` to be `));
  expect(e.message).toContain(fragment);
  return e;
}

const MS = 'a number of ms in';
const STR = ' (or a string like "30s")';

const invalid: Row[] = [
  // retry
  ['maxAttempts NaN', () => new Retry({ maxAttempts: Number.NaN }), 'maxAttempts', 'got NaN'],
  ['maxAttempts 0', () => new Retry({ maxAttempts: 0 }), 'maxAttempts', 'got 0'],
  ['maxAttempts -1', () => new Retry({ maxAttempts: -1 }), 'maxAttempts', 'got -1'],
  [
    'maxAttempts Infinity without maxDuration (it would retry for ever)',
    () => new Retry({ maxAttempts: Number.POSITIVE_INFINITY }),
    'maxAttempts',
    'Infinity only with a finite `maxDuration` (it would retry for ever), got Infinity',
  ],
  [
    'maxAttempts Infinity with maxDuration Infinity',
    () =>
      new Retry({
        maxAttempts: Number.POSITIVE_INFINITY,
        maxDuration: Number.POSITIVE_INFINITY,
      }),
    'maxAttempts',
    'Infinity only with a finite `maxDuration`',
  ],
  [
    'maxAttempts 1.5',
    () => new Retry({ maxAttempts: 1.5 }),
    'maxAttempts',
    'an integer in [1, Infinity]',
  ],
  ['maxAttempts "3"', () => new Retry({ maxAttempts: '3' as never }), 'maxAttempts', 'got "3"'],
  [
    'maxDuration 0',
    () => new Retry({ maxDuration: 0 }),
    'maxDuration',
    `${MS} [1, 2147483647] or Infinity`,
  ],
  [
    'maxDuration 2^31',
    () => new Retry({ maxDuration: 2_147_483_648 }),
    'maxDuration',
    'got 2147483648',
  ],
  [
    'maxDuration -Infinity',
    () => new Retry({ maxDuration: Number.NEGATIVE_INFINITY }),
    'maxDuration',
    'got -Infinity',
  ],
  ['delay -1', () => new Retry({ delay: -1 }), 'delay', `${MS} [0, 2147483647]${STR}, got -1`],
  ['delay Infinity', () => new Retry({ delay: Number.POSITIVE_INFINITY }), 'delay', 'got Infinity'],
  ['delay NaN', () => new Retry({ delay: Number.NaN }), 'delay', 'got NaN'],
  ['delay 2^31', () => new Retry({ delay: 2_147_483_648 }), 'delay', 'got 2147483648'],
  ['delay null', () => new Retry({ delay: null as never }), 'delay', 'got null'],
  [
    'maxDelay below delay',
    () => new Retry({ delay: 500, maxDelay: 499 }),
    'maxDelay',
    `${MS} [500, 2147483647]`,
  ],
  ['maxDelay 2^31', () => new Retry({ maxDelay: 2_147_483_648 }), 'maxDelay', 'got 2147483648'],
  [
    'multiplier 0.5',
    () => new Retry({ multiplier: 0.5 }),
    'multiplier',
    'a number in [1, 100], got 0.5',
  ],
  ['multiplier 101', () => new Retry({ multiplier: 101 }), 'multiplier', 'got 101'],
  [
    'multiplier Infinity',
    () => new Retry({ multiplier: Number.POSITIVE_INFINITY }),
    'multiplier',
    'got Infinity',
  ],
  [
    'backoff "fibonacci"',
    () => new Retry({ backoff: 'fibonacci' as never }),
    'backoff',
    'one of "constant", "linear", "exponential", "decorrelated"',
  ],
  ['jitter true', () => new Retry({ jitter: true as never }), 'jitter', 'got true'],
  ['random 0.5', () => new Retry({ random: 0.5 as never }), 'random', 'a function, got 0.5'],
  ['handle "all"', () => new Retry({ handle: 'all' as never }), 'handle', 'a function'],
  [
    'handleResult {}',
    () => new Retry({ handleResult: {} as never }),
    'handleResult',
    'got an object',
  ],
  ['retryAfter []', () => new Retry({ retryAfter: [] as never }), 'retryAfter', 'got an array'],
  [
    'lastResult "throw"',
    () => new Retry({ lastResult: 'throw' as never }),
    'lastResult',
    'one of "resolve", "reject", got "throw"',
  ],
  ['retry name ""', () => new Retry({ name: '' }), 'name', 'a non-empty string, got ""'],
  ['retry clock {}', () => new Retry({ clock: {} as never }), 'clock', 'a Clock'],
  // timeout
  ['timeout missing', () => new Timeout({} as never), 'timeout', 'got undefined'],
  ['timeout 0', () => new Timeout(0), 'timeout', `${MS} [1, 2147483647]${STR}, got 0`],
  ['timeout 0.5', () => new Timeout(0.5), 'timeout', 'got 0.5'],
  ['timeout NaN', () => new Timeout(Number.NaN), 'timeout', 'got NaN'],
  ['timeout Infinity', () => new Timeout(Number.POSITIVE_INFINITY), 'timeout', 'got Infinity'],
  ['timeout -1', () => new Timeout({ timeout: -1 }), 'timeout', 'got -1'],
  ['timeout 2^31', () => new Timeout(2_147_483_648), 'timeout', 'got 2147483648'],
  ['timeout "100"', () => new Timeout({ timeout: '100' as never }), 'timeout', 'got "100"'],
  [
    'timeout "1 s" in place of the options (a duration string needs no space)',
    () => new Timeout('1 s' as never),
    'timeout',
    'a duration: ms as a number, or a string like "250ms", "30s", "1.5s", "5m", "1h", in [1, 2147483647] ms, got "1 s"',
  ],
  [
    'timeout true in place of the options',
    () => new Timeout(true as never),
    'timeout',
    `${MS} [1, 2147483647] or a string like "2s" (or an options object holding \`timeout\`), got true`,
  ],
  [
    'timeout "Infinity" (leave the timeout out instead)',
    () => new Timeout('Infinity' as never),
    'timeout',
    'for no time limit, leave the timeout out of the pipeline, got "Infinity"',
  ],
  ['timeout null in place of the options', () => new Timeout(null as never), 'timeout', 'got null'],
  [
    'strategy "eager"',
    () => new Timeout({ timeout: 1, strategy: 'eager' as never }),
    'strategy',
    'one of "cooperative", "aggressive"',
  ],
  [
    'timeout debug 1',
    () => new Timeout({ timeout: 1, debug: 1 as never }),
    'debug',
    'a boolean, got 1',
  ],
  // bulkhead
  [
    'maxConcurrent 0',
    () => new Bulkhead(0),
    'maxConcurrent',
    'an integer in [1, 2147483647], got 0',
  ],
  [
    'maxConcurrent NaN',
    () => new Bulkhead({ maxConcurrent: Number.NaN }),
    'maxConcurrent',
    'got NaN',
  ],
  [
    'maxConcurrent Infinity',
    () => new Bulkhead(Number.POSITIVE_INFINITY),
    'maxConcurrent',
    'got Infinity',
  ],
  ['maxConcurrent 2.5', () => new Bulkhead(2.5), 'maxConcurrent', 'got 2.5'],
  ['maxConcurrent 2^31', () => new Bulkhead(2_147_483_648), 'maxConcurrent', 'got 2147483648'],
  [
    'maxQueue -1',
    () => new Bulkhead({ maxQueue: -1 }),
    'maxQueue',
    'an integer in [0, 2147483647], got -1',
  ],
  [
    'maxQueue Infinity',
    () => new Bulkhead({ maxQueue: Number.POSITIVE_INFINITY }),
    'maxQueue',
    'got Infinity',
  ],
  [
    'queueTimeout 0',
    () => new Bulkhead({ queueTimeout: 0 }),
    'queueTimeout',
    `${MS} [1, 2147483647] or Infinity${STR}, got 0`,
  ],
  [
    'queueTimeout 2^31',
    () => new Bulkhead({ queueTimeout: 2_147_483_648 }),
    'queueTimeout',
    'got 2147483648',
  ],
  ['bulkhead name 5', () => new Bulkhead({ name: 5 as never }), 'name', 'got 5'],
  // fallback
  ['fallback neither', () => new Fallback({}), 'value', 'exactly one of `value` and `action`'],
  ['fallback both', () => new Fallback({ value: 1, action: () => 1 }), 'value', 'got 1'],
  ['fallback action 1', () => new Fallback({ action: 1 as never }), 'action', 'a function, got 1'],
  // circuit breaker
  [
    'breakDuration 0',
    () => new CircuitBreaker({ breakDuration: 0 }),
    'breakDuration',
    `${MS} [1, 2147483647]${STR}, got 0`,
  ],
  [
    'breakDuration NaN',
    () => new CircuitBreaker({ breakDuration: Number.NaN }),
    'breakDuration',
    'got NaN',
  ],
  [
    'breakDuration Infinity',
    () => new CircuitBreaker({ breakDuration: Number.POSITIVE_INFINITY }),
    'breakDuration',
    'got Infinity',
  ],
  [
    'breakDuration 2^31',
    () => new CircuitBreaker({ breakDuration: 2_147_483_648 }),
    'breakDuration',
    'got 2147483648',
  ],
  [
    'breakDuration "30 secs"',
    () => new CircuitBreaker({ breakDuration: '30 secs' as never }),
    'breakDuration',
    'a string like "250ms", "30s", "1.5s", "5m", "1h", in [1, 2147483647] ms, got "30 secs"',
  ],
  [
    'failureRateThreshold 0',
    () => new CircuitBreaker({ failureRateThreshold: 0 }),
    'failureRateThreshold',
    'a number in (0, 1], got 0',
  ],
  [
    'failureRateThreshold 1.01',
    () => new CircuitBreaker({ failureRateThreshold: 1.01 }),
    'failureRateThreshold',
    'got 1.01',
  ],
  [
    'failureRateThreshold NaN',
    () => new CircuitBreaker({ failureRateThreshold: Number.NaN }),
    'failureRateThreshold',
    'got NaN',
  ],
  [
    'slowCallDuration -1',
    () => new CircuitBreaker({ slowCallDuration: -1 }),
    'slowCallDuration',
    `${MS} (0, 2147483647] or Infinity`,
  ],
  [
    'slowCallDuration 0 (every call would be slow)',
    () => new CircuitBreaker({ slowCallDuration: 0 }),
    'slowCallDuration',
    `${MS} (0, 2147483647] or Infinity (off)${STR}, got 0`,
  ],
  [
    'slowCallRateThreshold 0',
    () => new CircuitBreaker({ slowCallRateThreshold: 0 }),
    'slowCallRateThreshold',
    'got 0',
  ],
  [
    'window []',
    () => new CircuitBreaker({ window: [] as never }),
    'window',
    'an options object, got an array',
  ],
  ['window null', () => new CircuitBreaker({ window: null as never }), 'window', 'got null'],
  [
    'window without kind',
    () => new CircuitBreaker({ window: { size: 10 } as never }),
    'window.kind',
    'one of "consecutive", "count", "time"',
  ],
  [
    'window kind "sliding"',
    () => new CircuitBreaker({ window: { kind: 'sliding' } as never }),
    'window.kind',
    'got "sliding"',
  ],
  [
    'window.threshold 0',
    () => new CircuitBreaker({ window: { kind: 'consecutive', threshold: 0 } }),
    'window.threshold',
    'an integer in [1, 1000000], got 0',
  ],
  [
    'window.size 1.5',
    () => new CircuitBreaker({ window: { kind: 'count', size: 1.5 } }),
    'window.size',
    'got 1.5',
  ],
  [
    'window.size 1000001',
    () => new CircuitBreaker({ window: { kind: 'count', size: 1_000_001 } }),
    'window.size',
    'got 1000001',
  ],
  [
    'window.minimumCalls above size',
    () => new CircuitBreaker({ window: { kind: 'count', size: 10, minimumCalls: 11 } }),
    'window.minimumCalls',
    'an integer in [1, 10], got 11',
  ],
  [
    'window.duration 0',
    () => new CircuitBreaker({ window: { kind: 'time', duration: 0 } }),
    'window.duration',
    'got 0',
  ],
  [
    'window.buckets 1001',
    () => new CircuitBreaker({ window: { kind: 'time', buckets: 1001 } }),
    'window.buckets',
    'got 1001',
  ],
  [
    'window.buckets finer than 1 ms',
    () => new CircuitBreaker({ window: { kind: 'time', duration: 50, buckets: 100 } }),
    'window.buckets',
    'an integer in [1, 50] (at least 1 ms per bucket), got 100',
  ],
  [
    'count window with a time key',
    () => new CircuitBreaker({ window: { kind: 'count', duration: 100 } as never }),
    'window.duration',
    'not a known option',
  ],
  [
    'breakBackoff true',
    () => new CircuitBreaker({ breakBackoff: true as never }),
    'breakBackoff',
    'an options object, got true',
  ],
  [
    'breakBackoff.multiplier 0.9',
    () => new CircuitBreaker({ breakBackoff: { multiplier: 0.9 } }),
    'breakBackoff.multiplier',
    'a number in [1, 1000], got 0.9',
  ],
  [
    'breakBackoff.maxDuration below breakDuration',
    () => new CircuitBreaker({ breakDuration: 1000, breakBackoff: { maxDuration: 999 } }),
    'breakBackoff.maxDuration',
    `${MS} [1000, 2147483647]${STR}, got 999`,
  ],
  [
    'halfOpen.probes 0',
    () => new CircuitBreaker({ halfOpen: { probes: 0 } }),
    'halfOpen.probes',
    'got 0',
  ],
  [
    'halfOpen.maxConcurrent above probes',
    () => new CircuitBreaker({ halfOpen: { probes: 2, maxConcurrent: 3 } }),
    'halfOpen.maxConcurrent',
    'an integer in [1, 2], got 3',
  ],
  [
    'halfOpen.successRatio 0',
    () => new CircuitBreaker({ halfOpen: { successRatio: 0 } }),
    'halfOpen.successRatio',
    'a number in (0, 1], got 0',
  ],
  [
    'halfOpen.maxWait 2^31',
    () => new CircuitBreaker({ halfOpen: { maxWait: 2_147_483_648 } }),
    'halfOpen.maxWait',
    'got 2147483648',
  ],
  [
    'initialState "closed"',
    () => new CircuitBreaker({ initialState: 'closed' as never }),
    'initialState',
    'a snapshot from toJSON()',
  ],
  [
    'initialState of another window kind',
    () =>
      new CircuitBreaker({
        initialState: new CircuitBreaker({ window: { kind: 'consecutive' } }).toJSON(),
      }),
    'initialState',
    'with a count window',
  ],
  [
    'breaker debug "yes"',
    () => new CircuitBreaker({ debug: 'yes' as never }),
    'debug',
    'a boolean, got "yes"',
  ],
  // the options argument itself
  ['retry options []', () => new Retry([] as never), 'options', 'an options object, got an array'],
  ['breaker options null', () => new CircuitBreaker(null as never), 'options', 'got null'],
  ['bulkhead options "10"', () => new Bulkhead('10' as never), 'options', 'got "10"'],
  [
    'fallback options a function',
    () => new Fallback((() => 1) as never),
    'options',
    'got a function',
  ],
];

const valid: [label: string, make: () => unknown][] = [
  [
    'maxAttempts Infinity with a finite maxDuration',
    () => new Retry({ maxAttempts: Number.POSITIVE_INFINITY, maxDuration: 60_000 }),
  ],
  ['maxDuration Infinity', () => new Retry({ maxDuration: Number.POSITIVE_INFINITY })],
  ['maxDuration 2^31-1', () => new Retry({ maxDuration: 2_147_483_647 })],
  ['delay 0', () => new Retry({ delay: 0 })],
  ['delay 0.5', () => new Retry({ delay: 0.5 })],
  ['maxDelay equal to delay', () => new Retry({ delay: 50, maxDelay: 50 })],
  ['multiplier 1 and 100', () => [new Retry({ multiplier: 1 }), new Retry({ multiplier: 100 })]],
  ['timeout 1 and 2^31-1', () => [new Timeout(1), new Timeout(2_147_483_647)]],
  ['timeout 1.5', () => new Timeout(1.5)],
  ['maxQueue 0', () => new Bulkhead({ maxQueue: 0 })],
  ['queueTimeout Infinity', () => new Bulkhead({ queueTimeout: Number.POSITIVE_INFINITY })],
  ['slowCallDuration 0.5', () => new CircuitBreaker({ slowCallDuration: 0.5 })],
  [
    'slowCallDuration Infinity',
    () => new CircuitBreaker({ slowCallDuration: Number.POSITIVE_INFINITY }),
  ],
  ['failureRateThreshold 1', () => new CircuitBreaker({ failureRateThreshold: 1 })],
  ['breakDuration 2^31-1', () => new CircuitBreaker({ breakDuration: 2_147_483_647 })],
  [
    'window.buckets 1 ms each',
    () => new CircuitBreaker({ window: { kind: 'time', duration: 50, buckets: 50 } }),
  ],
  [
    'explicit undefined options',
    () => new CircuitBreaker({ breakDuration: undefined, window: undefined }),
  ],
  ['no options at all', () => [new Retry(), new Bulkhead(), new CircuitBreaker()]],
  [
    'a clock-shaped object',
    () => new Retry({ clock: { now: () => 0, setTimer: () => 1, clearTimer: () => {} } }),
  ],
];

describe('options validation table', () => {
  it.each(invalid)('rejects %s', (_label, make, option, fragment) => {
    expectOptionsError(make, option, fragment);
  });

  it.each(valid)('accepts %s', (_label, make) => {
    expect(make).not.toThrow();
  });

  it('suggests breakDuration for the unknown key breakDurtion', () => {
    const e = expectOptionsError(
      () => new CircuitBreaker({ breakDurtion: 5000 } as never),
      'breakDurtion',
      'not a known option',
    );
    expect(e.message).toContain('(did you mean `breakDuration`?)');
    expect(e.value).toBe(5000);
    expect(e.message).toMatch(/got 5000$/);
  });

  it.each([
    ['retry maxAttempt', () => new Retry({ maxAttempt: 3 } as never), 'maxAttempt', 'maxAttempts'],
    ['retry dealy', () => new Retry({ dealy: 3 } as never), 'dealy', 'delay'],
    ['timeout timout', () => new Timeout({ timout: 3 } as never), 'timout', 'timeout'],
    [
      'bulkhead maxconcurrent',
      () => new Bulkhead({ maxconcurrent: 3 } as never),
      'maxconcurrent',
      'maxConcurrent',
    ],
    [
      'halfOpen.probe',
      () => new CircuitBreaker({ halfOpen: { probe: 2 } } as never),
      'halfOpen.probe',
      'probes',
    ],
    [
      'breakBackoff.multipler',
      () => new CircuitBreaker({ breakBackoff: { multipler: 2 } } as never),
      'breakBackoff.multipler',
      'multiplier',
    ],
    [
      'window.treshold',
      () => new CircuitBreaker({ window: { kind: 'consecutive', treshold: 2 } } as never),
      'window.treshold',
      'threshold',
    ],
  ] as const)(
    'names the unknown key and suggests the option (%s)',
    (_label, make, option, suggestion) => {
      const e = expectOptionsError(make, option, 'not a known option');
      expect(e.message).toContain(`(did you mean \`${suggestion}\`?)`);
    },
  );

  it('lists the known options and suggests nothing for a key unlike any of them', () => {
    const e = expectOptionsError(
      () => new Bulkhead({ somethingElseEntirely: 1 } as never),
      'somethingElseEntirely',
      'not a known option',
    );
    expect(e.message).not.toContain('did you mean');
    expect(e.message).toContain(
      'known options are `maxConcurrent`, `maxQueue`, `queueTimeout`, `queue`, `codelTarget`, `codelInterval`, `name`, `clock`, `debug`',
    );
  });

  // With `buckets` left at its default (10), a time window shorter than 10 ms is a problem of
  // the duration, the option the caller set.
  it('blames window.duration (the option given) when a short time window leaves buckets under 1 ms', () => {
    const error = optionsError(() => new CircuitBreaker({ window: { kind: 'time', duration: 5 } }));
    expect(error.option).toBe('window.duration');
  });

  // A malformed snapshot must be refused with an OptionsError, not a TypeError from inside
  // the window.
  it.each([
    ['count', 5],
    ['consecutive', 5],
    ['time', [5]],
    ['count', null],
  ] as const)(
    'rejects a %s snapshot whose window data is %o with an OptionsError',
    (kind, data) => {
      const make = () =>
        new CircuitBreaker({
          window: { kind },
          initialState: {
            version: 1,
            state: 'closed',
            openRemaining: 0,
            consecutiveOpens: 0,
            window: { kind, data: data as never },
          },
        });
      expectOptionsError(make, 'initialState', 'a snapshot');
    },
  );
});
