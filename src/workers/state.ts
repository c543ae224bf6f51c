import type { Clock } from '../clock/Clock.js';
import { systemClock } from '../clock/systemClock.js';
import { OptionsError } from '../errors/OptionsError.js';
import { clockOption } from '../validation/validate.js';

/**
 * What a shared policy's state is made of: shared memory and the options every thread builds
 * its policy with. A plain object of cloneable values, so `postMessage` and `workerData` carry
 * it to other threads of the process (never to other processes: see the README).
 */
export interface SharedPolicyState<Kind extends string, Options> {
  /** The kind of policy the state is for. */
  readonly kind: Kind;
  /** The layout version of `buffer`; a thread running another version refuses the state. */
  readonly version: number;
  /** The memory every thread's policy reads and writes. */
  readonly buffer: SharedArrayBuffer;
  /** The options every thread's policy is built with (a clock is each thread's own). */
  readonly options: Options;
  /** `performance.timeOrigin` of the thread that made it: the origin of the shared time. */
  readonly timeOrigin: number;
}

/** Options each thread gives its own policy when it builds one from a shared state. */
export interface SharedLocalOptions {
  /**
   * The clock this thread's policy reads. Every thread sharing a state must read the same time:
   * the default is the system clock set to the time origin of the thread that made the state.
   * @default the system clock
   */
  readonly clock?: Clock;
}

/** @internal What tells a kind's state from any other: checked when a thread opens one. */
export interface StateFormat<Kind extends string> {
  readonly kind: Kind;
  /** The layout version. */
  readonly version: number;
  /** A word the buffer holds at Int32 index `magicAt` from the moment it is made. */
  readonly magic: number;
  readonly magicAt: number;
  /** The class that makes and opens it, for errors. */
  readonly what: string;
}

/** @internal A new state of `format` over `buffer` (its magic written), carrying `options`. */
export function newState<S extends SharedPolicyState<string, unknown>>(
  format: StateFormat<S['kind']>,
  buffer: SharedArrayBuffer,
  options: S['options'],
): S {
  Atomics.store(new Int32Array(buffer), format.magicAt, format.magic);
  return Object.freeze({
    kind: format.kind,
    version: format.version,
    buffer,
    options,
    timeOrigin: performance.timeOrigin,
  }) as S;
}

/** @internal `value` typed as a state of `format`, or an OptionsError naming `state`. */
export function openState<S extends SharedPolicyState<string, unknown>>(
  value: unknown,
  format: StateFormat<S['kind']>,
): S {
  const s = value as Partial<SharedPolicyState<string, unknown>> | null;
  const ok =
    typeof s === 'object' &&
    s !== null &&
    s.kind === format.kind &&
    s.version === format.version &&
    s.buffer instanceof SharedArrayBuffer &&
    s.buffer.byteLength >= (format.magicAt + 1) * 4 &&
    Atomics.load(new Int32Array(s.buffer), format.magicAt) === format.magic &&
    typeof s.options === 'object' &&
    s.options !== null &&
    typeof s.timeOrigin === 'number';
  if (!ok) {
    throw new OptionsError(
      'state',
      value,
      `the \`state\` of a ${format.what} (version ${format.version}) made in this process, posted or passed as workerData`,
    );
  }
  return value as S;
}

/** The clocks that read the time of an origin, by origin: one per origin and thread. */
const originClocks = new Map<number, Clock>();

/**
 * @internal The clock a thread's shared policy reads: `clock` when given, else the system
 * clock on the time origin of the thread that made the state (the same as this thread's on
 * Node, where every thread of a process shares one origin; offset where a runtime gives each
 * thread its own).
 */
export function sharedClock(clock: unknown, timeOrigin: number): Clock {
  if (clock !== undefined) return clockOption(clock, 'clock', systemClock);
  const offset = performance.timeOrigin - timeOrigin;
  if (offset === 0) return systemClock;
  let c = originClocks.get(timeOrigin);
  if (c === undefined) {
    c = { ...systemClock, now: () => performance.now() + offset };
    originClocks.set(timeOrigin, c);
  }
  return c;
}

/** @internal The options of `options` that go into a state: all but the clock. */
export function withoutClock<O extends { readonly clock?: unknown }>(options: O): Omit<O, 'clock'> {
  const { clock: _clock, ...rest } = options;
  return Object.freeze(rest);
}

/**
 * @internal True when `value` looks like a state rather than options: options never carry a
 * `buffer`.
 */
export function isState(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'buffer' in value && 'kind' in value;
}

/**
 * @internal What a shared policy's constructor works from: the state it was given (opened and
 * checked), or a new one from `make` when given options (which checks them and lays out the
 * buffer), and the options its in-process class is built with in this thread: the state's,
 * with the clock given here or the one of the thread that made the state.
 */
export function openOrMake<S extends SharedPolicyState<string, object>>(
  given: unknown,
  local: SharedLocalOptions | undefined,
  format: StateFormat<S['kind']>,
  make: () => { buffer: SharedArrayBuffer; options: S['options'] & { readonly clock?: unknown } },
): { state: S; options: S['options'] & { readonly clock: Clock } } {
  let state: S;
  let clock: unknown = local?.clock;
  if (isState(given)) state = openState<S>(given, format);
  else {
    const made = make();
    state = newState<S>(format, made.buffer, withoutClock(made.options));
    clock = made.options.clock;
  }
  return { state, options: { ...state.options, clock: sharedClock(clock, state.timeOrigin) } };
}
