import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { Criticality } from '../../protocol/criticality.js';
import type { DurationString } from '../../protocol/kind.js';
import {
  type MetricsOptions,
  type ResolvedMetrics,
  resolveMetrics,
} from '../../telemetry/metrics.js';
import {
  checkOptionsObject,
  duration,
  fn,
  integer,
  MAX_DURATION_MS,
  numberIn,
  oneOf,
} from '../../validation/validate.js';
import { resolveNamed } from '../shared/commonOptions.js';

/**
 * What a chaos step injects into the calls it picks: a `fault` (the call fails without being
 * made), `latency` (the call waits, then goes on), an `outcome` (the call ends with a value of
 * the step's without being made) or a `behavior` (a side action runs, then the call goes on).
 */
export type ChaosStrategy = 'fault' | 'latency' | 'outcome' | 'behavior';

/** The strategies, in the order metrics report them. */
export const CHAOS_STRATEGIES: readonly ChaosStrategy[] = Object.freeze([
  'fault',
  'latency',
  'outcome',
  'behavior',
]);

/**
 * What the functions of a chaos step's options learn of the call they decide for. They run
 * synchronously as the call reaches the step, within the caller's async context, so they may
 * read an `AsyncLocalStorage` the application keeps (a request marked by a header, a tenant).
 */
export interface ChaosCall {
  /** The chaos step's name. */
  readonly name: string;
  readonly strategy: ChaosStrategy;
  /** The call's criticality (`execute(fn, { criticality })`, or the request context's). */
  readonly criticality: Criticality;
}

/** The options every strategy takes. */
export interface ChaosCommonOptions {
  /**
   * The injection rate: the share of calls it injects into, in [0, 1]. Each call draws from
   * `random`; a call drawn below the rate is injected (when `enabled` and under `maxActive`).
   * @default 0
   */
  readonly rate?: number;
  /**
   * Whether it injects at all: a boolean, or a function of the call asked for each call drawn
   * for injection (for a rollout by tenant, or faults scoped to requests a header marks). Off
   * until switched on, so a step left in a pipeline by mistake injects nothing.
   * @default false
   */
  readonly enabled?: boolean | ((call: ChaosCall) => boolean);
  /**
   * The most injections active at once (Envoy's `max_active_faults`): past it, a call drawn
   * for injection goes on untouched (and counts as `capped`). A latency is active while its
   * call waits, a behaviour while its action runs; a fault or an outcome ends as it is made.
   * An integer >= 0, or Infinity.
   * @default Infinity
   */
  readonly maxActive?: number;
  /**
   * The source of the draws, in [0, 1): seed one (`mulberry32(42)`) and a run injects into the
   * same calls every time.
   * @default Math.random
   */
  readonly random?: () => number;
  /** Name used in errors, events and metrics. @default "chaos" */
  readonly name?: string;
  /** The clock latencies wait on. @default the system clock */
  readonly clock?: Clock;
  /** What it reports to metric exporters (see {@link MetricsOptions}). @default true */
  readonly metrics?: boolean | MetricsOptions;
}

/** Injects faults: a picked call fails with `error` without being made. */
export interface ChaosFaultOptions extends ChaosCommonOptions {
  /** @default "fault" */
  readonly strategy?: 'fault';
  /**
   * The error a picked call fails with: one error (thrown for every injection), or a function
   * making one per call. The error is thrown as it is, so the policies outside (a retry's
   * `handle`, a breaker's) judge it as they would the real one; `isInjectedFault(error)` tells
   * it from a real failure.
   * @default a `ChaosFaultError`, which breakers outside count as a failure of the dependency
   */
  readonly error?: Error | ((call: ChaosCall) => Error);
}

/** Injects latency: a picked call waits `latency` ms on the clock, then goes on. */
export interface ChaosLatencyOptions extends ChaosCommonOptions {
  readonly strategy: 'latency';
  /**
   * The delay, in ms or as a duration (`"250ms"`), in [0, 2^31-1]. The wait ends at once when
   * the call's signal aborts (its caller's, a timeout's).
   * @default 1000
   */
  readonly latency?: number | DurationString;
}

/** Injects outcomes: a picked call ends with `outcome` without being made. */
export interface ChaosOutcomeOptions<T = unknown> extends ChaosCommonOptions {
  readonly strategy: 'outcome';
  /**
   * The value a picked call ends with (an HTTP-shaped `Response` with status 503 and a
   * `Retry-After` header, say), or a function making one per call (a `Response` body can be
   * read once: make one per call). Policies outside judge it as the dependency's value: a
   * breaker whose `handleResult` counts it counts it.
   */
  readonly outcome: T | ((call: ChaosCall) => T);
}

/** Injects a behaviour: a side action runs before a picked call, which then goes on. */
export interface ChaosBehaviorOptions extends ChaosCommonOptions {
  readonly strategy: 'behavior';
  /**
   * The action. When it returns a promise, the call waits for it (and ends at once if its signal
   * aborts); when it throws or its promise rejects, the call fails with that error.
   */
  readonly behavior: (call: ChaosCall) => void | PromiseLike<void>;
}

/** Options of a {@link Chaos} step: one strategy and what it injects. */
export type ChaosOptions<T = unknown> =
  | ChaosFaultOptions
  | ChaosLatencyOptions
  | ChaosOutcomeOptions<T>
  | ChaosBehaviorOptions;

/** Defaults of {@link ChaosOptions}. */
export const chaosDefaults = Object.freeze({
  strategy: 'fault' as ChaosStrategy,
  rate: 0,
  enabled: false,
  maxActive: Number.POSITIVE_INFINITY,
  latency: 1_000,
  name: 'chaos',
});

/** The options after defaults and checks, as the step keeps them; not exported by name. */
export interface ResolvedChaosOptions {
  strategy: ChaosStrategy;
  rate: number;
  enabled: boolean | ((call: ChaosCall) => boolean);
  maxActive: number;
  random: () => number;
  /** `fault`: the error, or what makes one; undefined for the default `ChaosFaultError`. */
  error: Error | ((call: ChaosCall) => Error) | undefined;
  latency: number;
  outcome: unknown;
  behavior: ((call: ChaosCall) => unknown) | undefined;
  name: string;
  clock: Clock;
  metrics: ResolvedMetrics;
}

const COMMON = ['strategy', 'rate', 'enabled', 'maxActive', 'random', 'name', 'clock', 'metrics'];
/** The keys of each strategy's own options. */
const OWN: Readonly<Record<ChaosStrategy, readonly string[]>> = {
  fault: ['error'],
  latency: ['latency'],
  outcome: ['outcome'],
  behavior: ['behavior'],
};
const KEYS = [...COMMON, ...Object.values(OWN).flat()];

/** @internal */
export function resolveChaosOptions<T>(options: ChaosOptions<T> | undefined): ResolvedChaosOptions {
  const o = checkOptionsObject(options, KEYS, '');
  const d = chaosDefaults;
  const strategy = oneOf(o.strategy, 'strategy', d.strategy, CHAOS_STRATEGIES);
  for (const other of CHAOS_STRATEGIES) {
    if (other === strategy) continue;
    for (const key of OWN[other]) {
      if (o[key] !== undefined) {
        throw new OptionsError(
          key,
          o[key],
          `left out: it is an option of strategy "${other}", and this step's strategy is "${strategy}"`,
        );
      }
    }
  }
  if (strategy === 'outcome' && !('outcome' in o)) {
    throw new OptionsError(
      'outcome',
      undefined,
      'a value (or a function making one per call): strategy "outcome" needs one',
    );
  }
  return {
    strategy,
    rate: numberIn(o.rate, 'rate', d.rate, 0, 1),
    enabled: enabledOption(o.enabled),
    maxActive: integer(o.maxActive, 'maxActive', d.maxActive, 0, Number.POSITIVE_INFINITY),
    random: fn(o.random, 'random', Math.random),
    error: errorOption(o.error),
    latency: duration(o.latency, 'latency', d.latency, 0, false, MAX_DURATION_MS),
    outcome: o.outcome,
    behavior:
      strategy === 'behavior'
        ? (fn<(call: ChaosCall) => unknown>(o.behavior, 'behavior', undefined) ??
          required('behavior'))
        : undefined,
    ...resolveNamed(o, d.name),
    metrics: resolveMetrics(o.metrics),
  };
}

function enabledOption(value: unknown): ResolvedChaosOptions['enabled'] {
  if (value === undefined) return false;
  if (typeof value === 'boolean' || typeof value === 'function') {
    return value as ResolvedChaosOptions['enabled'];
  }
  throw new OptionsError('enabled', value, 'a boolean, or a function of the call returning one');
}

function errorOption(value: unknown): ResolvedChaosOptions['error'] {
  if (value === undefined || value instanceof Error || typeof value === 'function') {
    return value as ResolvedChaosOptions['error'];
  }
  throw new OptionsError('error', value, 'an Error, or a function of the call returning one');
}

function required(key: string): never {
  throw new OptionsError(key, undefined, 'a function: strategy "behavior" needs one');
}
