import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { DurationString } from '../../protocol/kind.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';
import { checkOptionsObject, duration, fn, integer, numberIn } from '../../validation/validate.js';
import { MEASURED_KEYS, type ResolvedMeasured, resolveMeasured } from '../shared/commonOptions.js';
import type { LoadSignal } from './eventLoopLoad.js';

/** Options of {@link LoadShedder}. */
export interface LoadShedderOptions<T = unknown> {
  /**
   * The SRE book's K: calls go through while the dependency accepted at least one in `k` of
   * the recent requests; beyond, the shedder refuses with probability
   * `max(0, (requests - k × accepts) / (requests + 1))`. Lower is stricter; in [1, 100].
   * @default 2
   */
  readonly k?: number;
  /**
   * How far back requests and accepts count, in ms or as a duration (`"1m"`), in [1 s, 1 h]; kept
   * in 60 buckets. The last twelfth of it (5 s of a minute) is also judged alone, and the lower
   * of the two refusal rates applies, so refusals fall within seconds once calls succeed again.
   * @default 60000
   */
  readonly window?: number | DurationString;
  /**
   * The highest share of calls it refuses, in [0, 1): the rest still reach the dependency, so
   * it learns when the dependency recovers. @default 0.9
   */
  readonly maxRefusalRate?: number;
  /**
   * No refusal while the window holds fewer requests than this, in [0, 2^31-1]: at low traffic
   * (below 100 a minute, about 1.7 a second, with the default window) a few failures would
   * make a large share, and shedding would protect nothing; and none at a cold start. The
   * recent part of the window is judged alone only when it holds as many.
   * @default 100
   */
  readonly minRequests?: number;
  /**
   * Which errors mean the dependency did not accept the call (overloaded, failing). Refusals by
   * other breakwater policies and the caller's own cancellation never count. @default every error
   */
  readonly handle?: (error: unknown) => boolean;
  /** Which successful results mean it did not accept the call (e.g. HTTP 429, 503). @default none */
  readonly handleResult?: (result: T) => boolean;
  /**
   * A reason of the process's own to refuse calls, beside the formula: the shedder refuses at
   * least `signal.level()` of them (lowest criticality first, as always). For inbound work,
   * `eventLoopLoad()` reads the event loop. The shedder does not dispose it. @default none
   */
  readonly signal?: LoadSignal;
  /** Source of randomness in [0, 1), for tests. @default Math.random */
  readonly random?: () => number;
  /** Name used in errors, events and metrics. @default "loadShedder" */
  readonly name?: string;
  /** @default the system clock */
  readonly clock?: Clock;
  /** Fresh errors with stack traces instead of preallocated ones. @default false */
  readonly debug?: boolean;
  /** What it reports to metric exporters (see {@link MetricsOptions}). @default true */
  readonly metrics?: boolean | MetricsOptions;
}

/** Defaults of {@link LoadShedderOptions}. */
export const loadShedderDefaults = Object.freeze({
  k: 2,
  window: 60_000,
  maxRefusalRate: 0.9,
  minRequests: 100,
  name: 'loadShedder',
});

/** The options after defaults and checks, as the policy keeps them; not exported by name. */
export interface ResolvedLoadShedderOptions extends ResolvedMeasured {
  k: number;
  window: number;
  maxRefusalRate: number;
  minRequests: number;
  handle: ((error: unknown) => boolean) | undefined;
  handleResult: ((result: unknown) => boolean) | undefined;
  signal: LoadSignal | undefined;
  random: () => number;
}

const KEYS = [
  'k',
  'window',
  'maxRefusalRate',
  'minRequests',
  'handle',
  'handleResult',
  'signal',
  'random',
  ...MEASURED_KEYS,
];

/** @internal */
export function resolveLoadShedderOptions<T>(
  options: LoadShedderOptions<T> | undefined,
): ResolvedLoadShedderOptions {
  const o = checkOptionsObject(options, KEYS, '');
  const d = loadShedderDefaults;
  const maxRefusalRate = numberIn(o.maxRefusalRate, 'maxRefusalRate', d.maxRefusalRate, 0, 1);
  if (maxRefusalRate >= 1) {
    throw new OptionsError(
      'maxRefusalRate',
      maxRefusalRate,
      'a number in [0, 1): some calls must still reach the dependency to see it recover',
    );
  }
  return {
    k: numberIn(o.k, 'k', d.k, 1, 100),
    window: duration(o.window, 'window', d.window, 1_000, false, 3_600_000),
    maxRefusalRate,
    minRequests: integer(o.minRequests, 'minRequests', d.minRequests, 0, 2_147_483_647),
    handle: fn(o.handle, 'handle', undefined),
    handleResult: fn(o.handleResult, 'handleResult', undefined),
    signal: signalOption(o.signal),
    random: fn(o.random, 'random', Math.random),
    ...resolveMeasured(o, d.name),
  };
}

function signalOption(value: unknown): LoadSignal | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof (value as Partial<LoadSignal>).level !== 'function'
  ) {
    throw new OptionsError('signal', value, 'a LoadSignal (an object with a `level()` method)');
  }
  return value as LoadSignal;
}
