import { OptionsError, UsageError } from '../errors/OptionsError.js';
import { brand } from '../protocol/brand.js';
import { type Criticality, criticalityLevel, DEFAULT_LEVEL } from '../protocol/criticality.js';
import type { FallbackValueOf, ResultTypeOf } from '../protocol/result.js';
import { ANSWERED, type AnsweringGate, type Gate, NO_TIME, StepKind } from '../protocol/step.js';
import { duration } from '../validation/validate.js';
import { ambientOptions } from './ambient.js';
import { type ExecuteOptions, type ExecutionContext, SHARED_CONTEXT } from './context.js';
import { checkPolicies, planPipeline } from './core.js';
import { Execution, type PipelineCore, type Step, SYNC } from './Execution.js';
import { type GateHandlers, gateHandlers, oneGateHandlers, sameTokens } from './gateHandlers.js';
import type { KeyedPipeline } from './KeyedPipeline.js';
import type { KeyedStep } from './KeyedStep.js';
import { COMPOSE_KEYED, isKeyedStep } from './keyedMark.js';
import { notAFunction, signalError } from './misuse.js';
import type { PassiveStep } from './passive.js';
import { releaseFailed, releaseOk, releaseRefused } from './release.js';
import { type ExecutionResult, type Failure, failure, isThenable, success } from './result.js';
import { trackLate } from './syncLate.js';

/** Any policy a pipeline can hold. */
export type Policy = Step;

/**
 * The result type a pipeline of `policies` requires of its functions: what every policy typed
 * by its result (a `Retry<Response>`) requires, `unknown` when none is.
 */
export type PipelineResult<P extends readonly unknown[]> = P extends readonly [
  infer Head,
  ...infer Rest,
]
  ? ResultTypeOf<Head> & PipelineResult<Rest>
  : unknown;

/**
 * What the fallbacks of a pipeline of `policies` may resolve a call with instead of its
 * function's value: the union of their value types, `never` without a fallback.
 */
export type PipelineFallbacks<P extends readonly unknown[]> = FallbackValueOf<P[number]>;

/**
 * `P` when it holds a keyed step, else never: the overload of {@link pipeline} that returns a
 * {@link KeyedPipeline} applies to those only (and the other is last, for `Parameters<typeof
 * pipeline>` and `ReturnType<typeof pipeline>`).
 */
type WithKeyedStep<P extends readonly unknown[]> = [Extract<P[number], KeyedStep>] extends [never]
  ? never
  : P;

/**
 * Policies composed outer-to-inner in the order given, run by one flat executor. Build one with
 * {@link pipeline} or {@link PipelineBuilder}; policies are reusable objects, so one breaker may
 * guard several pipelines. `R` is the result type its policies judge (`pipeline(...)` reads it
 * from a `Retry<Response>`): its functions must return an `R` (or a promise of one). `F` is what
 * its fallbacks may give instead (`never` without one): a call resolves with its function's
 * value or an `F`.
 *
 * @example
 * ```ts
 * const p = pipeline(
 *   retry({ maxAttempts: 3 }),
 *   new CircuitBreaker({ window: { kind: 'consecutive', threshold: 5 } }),
 *   timeout(1_000),
 *   bulkhead({ maxConcurrent: 10 }),
 * );
 * const body = await p.execute(({ signal }) => fetch(url, { signal }).then((r) => r.text()));
 * ```
 */
export class Pipeline<R = unknown, F = never> {
  /** The policies, outermost first. */
  readonly policies: readonly Policy[];
  // Replaced when a step it may leave out changes (see `plan`): not readonly.
  /** @internal */ core!: PipelineCore;
  /** Only gates that never wait or time calls: the allocation-light path applies. */
  private gatesOnly!: boolean;
  /** Only gates that never wait, and fallbacks: `executeSync` is allowed. */
  private syncCapable!: boolean;
  private gates!: readonly Gate[];
  /**
   * The gate of a gates-only pipeline of one gate that times no call, else undefined: such a
   * pipeline goes straight to {@link executeSoleGate}.
   */
  private soleGate: Gate | undefined;
  private handlers: GateHandlers | undefined;
  private tokens!: number[];
  /** Made at the first refusal a `tryExecute` answers (a pipeline per key may never see one). */
  // Kept when it plans again: a result is reused only for the very error it was made for.
  private rejectionErrors: (Error | undefined)[] | undefined = undefined;
  private rejectionResults: (Promise<Failure> | undefined)[] | undefined = undefined;
  /** @internal */ syncDepth = 0;
  /** @internal Sized for one call at a time: assigned past its end, it would grow to 17. */
  syncTokens!: number[];

  constructor(policies: readonly Policy[]) {
    checkPolicies(policies);
    this.policies = Object.freeze([...policies]);
    this.plan();
  }

  /**
   * @internal Plans its calls from its policies, leaving out the passive ones (a chaos step
   * switched off, which then costs a call nothing); asked, such a step notes the pipeline and
   * calls this again when that changes (`pipeline/passive.ts`). Calls in flight finish on the
   * plan they started with.
   */
  plan(): void {
    // A copy that is not frozen: V8 does not inline element loads from frozen arrays, and the
    // executor reads a step per policy on every call.
    // Sliced: an array grown by `filter` holds room for 17 steps, which the plan would keep.
    // A gate from outside the library may have a `passive` member of its own that is no method.
    const plan = planPipeline(
      this.policies
        .filter((p) => {
          const passive = (p as Partial<PassiveStep>).passive;
          return typeof passive !== 'function' || !passive.call(p, this);
        })
        .slice(),
    );
    this.core = plan.core;
    this.gates = plan.gates;
    this.gatesOnly = plan.gatesOnly;
    this.soleGate = plan.soleGate;
    this.syncCapable = plan.syncCapable;
    this.tokens = new Array(this.gates.length).fill(0);
    this.syncTokens = new Array(this.core.steps.length).fill(0);
    // Handlers made for another plan's gates would release those, with their tokens.
    this.handlers = undefined;
  }

  /**
   * Disposes every policy of the pipeline: pending retry delays and bulkhead queue waits end
   * with a `UsageError`, timeout timers are cancelled and listeners removed, so no timer is
   * left behind. Policies shared with other pipelines are disposed for those too.
   */
  dispose(): void {
    for (const policy of this.policies) policy.dispose();
  }

  /**
   * Runs `fn` through the policies. Resolves with its value; rejects with its error or with a
   * `PolicyRejectedError` when a policy refuses the call. A call misused (`fn` not a function,
   * a `signal` that is not an AbortSignal, an invalid `timeout` or `criticality`) rejects with
   * an `OptionsError` before any policy sees it.
   */
  execute<T extends R>(
    fn: (context: ExecutionContext) => T | PromiseLike<T>,
    options?: ExecuteOptions,
  ): Promise<T | F> {
    if (typeof fn !== 'function') return Promise.reject(notAFunction(fn));
    if (ambientOptions !== undefined) options = ambientOptions(options);
    const sole = this.soleGate;
    if (sole !== undefined && isPlain(options)) {
      return this.executeSoleGate(sole, fn) as Promise<T | F>;
    }
    return this.executeAny(fn, options) as Promise<T | F>;
  }

  /**
   * {@link execute} for every pipeline but a lone gate's: kept apart so that `execute` stays
   * small enough for V8 to inline into its callers.
   */
  private executeAny(
    fn: (context: ExecutionContext) => unknown,
    options: ExecuteOptions | undefined,
  ): Promise<unknown> {
    let timed = false;
    if (this.gatesOnly && isPlain(options)) {
      const sampler = this.core.sampler;
      const gates = this.gates;
      if (sampler === undefined || !sampler.due()) {
        return gates.length === 1
          ? this.executeSoleGate(gates[0]!, fn)
          : this.executeGates(fn, false);
      }
      if (gates.length === 1) return this.executeSoleGateTimed(gates[0]!, fn);
      timed = true;
    }
    const exec = Execution.obtain(this.core, fn, options?.signal, false);
    if (timed) exec.markTimed();
    if (options !== undefined) {
      const error = applyCallOptions(exec, options);
      if (error !== undefined) return Promise.reject(error);
    }
    const next = exec.run();
    if (next !== SYNC) return next as Promise<unknown>;
    const ok = exec.ok;
    const value = exec.value;
    exec.recycle();
    return ok ? Promise.resolve(value) : Promise.reject(value);
  }

  /**
   * Like {@link execute}, but never rejects: resolves with `{ ok: true, value }` or
   * `{ ok: false, error, rejected }`. A refusal by a breaker or bulkhead is returned without
   * throwing or allocating.
   */
  tryExecute<T extends R>(
    fn: (context: ExecutionContext) => T | PromiseLike<T>,
    options?: ExecuteOptions,
  ): Promise<ExecutionResult<T | F>> {
    if (typeof fn !== 'function') return Promise.resolve(failure(notAFunction(fn)));
    if (ambientOptions !== undefined) options = ambientOptions(options);
    let timed = false;
    if (this.gatesOnly && isPlain(options)) {
      const sampler = this.core.sampler;
      if (sampler === undefined || !sampler.due()) {
        return this.executeGates(fn, true) as Promise<ExecutionResult<T | F>>;
      }
      timed = true;
    }
    const exec = Execution.obtain(this.core, fn, options?.signal, true);
    if (timed) exec.markTimed();
    if (options !== undefined) {
      const error = applyCallOptions(exec, options);
      if (error !== undefined) return Promise.resolve(failure(error));
    }
    const next = exec.run();
    if (next !== SYNC) return next as Promise<ExecutionResult<T | F>>;
    const ok = exec.ok;
    const value = exec.value;
    exec.recycle();
    return Promise.resolve(ok ? success(value as T | F) : failure(value));
  }

  /**
   * Runs a synchronous `fn` through a pipeline of policies that never wait (circuit breakers,
   * bulkheads without a queue, rate limiters without `maxWait`, fallbacks), returning its value
   * or throwing, with no promise and no allocation. If `fn` returns a promise anyway, outcomes
   * are recorded when it settles and the promise is returned. Throws {@link UsageError} for a
   * pipeline that may wait, and {@link OptionsError} for an unknown `criticality`, a `fn` that
   * is not a function or a `signal` that is not an AbortSignal.
   */
  executeSync<T extends R>(
    fn: (context: ExecutionContext) => T,
    options?: { readonly criticality?: Criticality },
  ): T | F {
    if (!this.syncCapable) {
      throw new UsageError(
        'executeSync needs a pipeline whose policies never wait (circuit breakers, bulkheads without a queue, rate limiters without `maxWait`, fallbacks); use execute',
      );
    }
    if (typeof fn !== 'function') throw notAFunction(fn);
    if (ambientOptions !== undefined) options = ambientOptions(options);
    const level = options === undefined ? DEFAULT_LEVEL : syncLevel(options);
    const steps = this.core.steps;
    const n = steps.length;
    // Nested executeSync calls on one pipeline get their own span of the token array.
    const base = this.syncDepth++ * n;
    const tokens = this.syncTokens;
    const clock = this.core.clock;
    const sampler = this.core.sampler;
    const started = this.core.needsEndTime || sampler?.due() === true ? clock.now() : Number.NaN;
    try {
      for (let i = 0; i < n; i++) {
        const step = steps[i]!;
        if (step.stepKind !== StepKind.Gate) continue;
        const token = step.admit(NO_TIME, level);
        if (token < 0) {
          const ok = token === ANSWERED;
          const value = ok ? (step as AnsweringGate).answer() : step.rejection();
          return this.unwindSync(i - 1, ok, value, base, Number.NaN) as T;
        }
        tokens[base + i] = token;
      }
      let result: unknown;
      let thenable: boolean;
      try {
        result = fn(SHARED_CONTEXT);
        // In the try: reading `then` throws for a revoked Proxy, and the gates must be released.
        thenable = isThenable(result);
      } catch (error) {
        return this.unwindSync(n - 1, false, error, base, this.elapsedSince(started)) as T;
      }
      if (thenable) return trackLate(this, result as PromiseLike<unknown>, base, n, started) as T;
      return this.unwindSync(n - 1, true, result, base, this.elapsedSince(started)) as T;
    } finally {
      this.syncDepth--;
    }
  }

  /** @internal ms since `started`, or NaN when the call is not timed. */
  elapsedSince(started: number): number {
    return Number.isNaN(started) ? Number.NaN : this.core.clock.now() - started;
  }

  /** @internal Releases the gates of steps `from`..0 and runs their fallbacks on an outcome. */
  unwindSync(
    from: number,
    ok: boolean,
    value: unknown,
    base: number,
    elapsed: number,
    steps: readonly Step[] = this.core.steps,
  ): unknown {
    const tokens = this.syncTokens;
    for (let i = from; i >= 0; i--) {
      const step = steps[i]!;
      if (step.stepKind === StepKind.Gate) {
        const token = tokens[base + i]!;
        if (ok) releaseOk(step, token, value, elapsed);
        else releaseFailed(step, token, value, elapsed);
      } else if (step.stepKind === StepKind.Fallback && step.applies(!ok, value)) {
        try {
          value = step.produce(!ok, value);
          ok = true;
        } catch (error) {
          value = error;
          ok = false;
        }
      }
    }
    if (ok) return value;
    throw value;
  }

  /**
   * The path for pipelines of gates that never wait and need no time: no per-call record and no
   * per-call closures. The promise handlers depend only on the tokens (breaker generations),
   * which change only on state transitions, so they are built once per token set.
   */
  private executeGates(
    fn: (context: ExecutionContext) => unknown,
    tryMode: boolean,
  ): Promise<unknown> {
    const gates = this.gates;
    const tokens = this.tokens;
    for (let i = 0; i < gates.length; i++) {
      const gate = gates[i]!;
      const token = gate.admit(NO_TIME, DEFAULT_LEVEL);
      if (token < 0) {
        if (token === ANSWERED) return answeredGates(gates, tokens, i, tryMode);
        const refusal = gate.rejection();
        releaseRefused(gates, tokens, i, refusal);
        return tryMode ? this.rejectedResult(i) : Promise.reject(refusal);
      }
      tokens[i] = token;
    }
    let h = this.handlers;
    if (h === undefined || !sameTokens(h.tokens, tokens))
      h = this.handlers = this.makeHandlers(tokens.slice());
    return this.callGated(fn, h, tryMode);
  }

  /**
   * {@link executeGates} for the most common pipeline, a single gate (a breaker on its own),
   * without the loops over arrays of one.
   */
  private executeSoleGate(
    gate: Gate,
    fn: (context: ExecutionContext) => unknown,
  ): Promise<unknown> {
    const token = gate.admit(NO_TIME, DEFAULT_LEVEL);
    if (token < 0) return refusedOrAnswered(gate, token);
    let h = this.handlers;
    if (h === undefined || h.token !== token) {
      h = this.handlers = oneGateHandlers(gate, [token]);
    }
    let result: unknown;
    try {
      result = fn(SHARED_CONTEXT);
      // In the try: the `then` of an object made from Promise.prototype throws, and the gate
      // must still be released.
      if (result instanceof Promise) return result.then(h.ok, h.err);
    } catch (error) {
      return this.gatedThrew(h, error, false);
    }
    return this.gatedReturned(h, result, false);
  }

  /**
   * A call of a one-gate pipeline picked for its gate's latency histogram, timed from before
   * admission to its end. Its closures cost less than a trip through the general executor,
   * and it is one call in `metrics.latency` (16 by default).
   */
  private executeSoleGateTimed(
    gate: Gate,
    fn: (context: ExecutionContext) => unknown,
  ): Promise<unknown> {
    const clock = this.core.clock;
    const started = clock.now();
    const token = gate.admit(started, DEFAULT_LEVEL);
    if (token < 0) return refusedOrAnswered(gate, token);
    const end = (ok: boolean, value: unknown): void => {
      if (ok) releaseOk(gate, token, value, clock.now() - started);
      else releaseFailed(gate, token, value, clock.now() - started);
    };
    let result: unknown;
    let thenable: boolean;
    try {
      result = fn(SHARED_CONTEXT);
      thenable = isThenable(result);
    } catch (error) {
      end(false, error);
      return Promise.reject(error);
    }
    if (!thenable) {
      end(true, result);
      return Promise.resolve(result);
    }
    return Promise.resolve(result).then(
      (value) => {
        end(true, value);
        return value;
      },
      (error: unknown) => {
        end(false, error);
        throw error;
      },
    );
  }

  /** Calls `fn` once its gates admitted it; `h` release them when it settles. */
  private callGated(
    fn: (context: ExecutionContext) => unknown,
    h: GateHandlers,
    tryMode: boolean,
  ): Promise<unknown> {
    let result: unknown;
    try {
      result = fn(SHARED_CONTEXT);
      // Native promises first: their `then` already returns a native promise. In the try, as in
      // executeSoleGate.
      if (result instanceof Promise) {
        return tryMode ? result.then(h.tryOk, h.tryErr) : result.then(h.ok, h.err);
      }
    } catch (error) {
      return this.gatedThrew(h, error, tryMode);
    }
    return this.gatedReturned(h, result, tryMode);
  }

  /** A gated `fn` threw: release the gates and fail. */
  private gatedThrew(h: GateHandlers, error: unknown, tryMode: boolean): Promise<unknown> {
    try {
      h.err(error);
    } catch {
      // h.err rethrows by design.
    }
    return tryMode ? Promise.resolve(failure(error)) : Promise.reject(error);
  }

  /** A gated `fn` returned something other than a native promise: a value or a thenable. */
  private gatedReturned(h: GateHandlers, result: unknown, tryMode: boolean): Promise<unknown> {
    let thenable: boolean;
    try {
      // Reading `then` throws for a revoked Proxy or a stale immer draft: a failed call.
      thenable = isThenable(result);
    } catch (error) {
      return this.gatedThrew(h, error, tryMode);
    }
    if (thenable) {
      const p = Promise.resolve(result);
      return tryMode ? p.then(h.tryOk, h.tryErr) : p.then(h.ok, h.err);
    }
    return Promise.resolve(tryMode ? h.tryOk(result) : h.ok(result));
  }

  private makeHandlers(tokens: number[]): GateHandlers {
    return gateHandlers(this.gates, tokens);
  }

  /** One resolved promise per refusing gate (per error, in debug mode), reused for every refusal. */
  private rejectedResult(i: number): Promise<Failure> {
    const error = this.gates[i]!.rejection();
    const n = this.gates.length;
    const errors = (this.rejectionErrors ??= new Array(n).fill(undefined));
    const results = (this.rejectionResults ??= new Array(n).fill(undefined));
    if (errors[i] === error) return results[i]!;
    const result = Promise.resolve(failure(error));
    errors[i] = error;
    results[i] = result;
    return result;
  }
}

/**
 * Composes policies outer-to-inner in the order given into one {@link Pipeline}. Given keyed
 * steps (`registry.keyed(kind, name)`), it returns a {@link KeyedPipeline} instead, whose calls
 * each use the instances of their key.
 *
 * @example
 * ```ts
 * const p = pipeline(fallback({ value: null }), retry(), breaker, timeout(500));
 * const perHost = pipeline(retry(), registry.keyed('circuitBreaker', 'api'));
 * ```
 */
export function pipeline<P extends (Policy | KeyedStep)[]>(
  ...policies: P & WithKeyedStep<P>
): KeyedPipeline<PipelineResult<P>, PipelineFallbacks<P>>;
export function pipeline<P extends Policy[]>(
  ...policies: P
): Pipeline<PipelineResult<P>, PipelineFallbacks<P>>;
export function pipeline(...policies: (Policy | KeyedStep)[]): Pipeline | KeyedPipeline {
  // Only here: a Pipeline's calls never look for keys.
  for (const p of policies) {
    if (isKeyedStep(p)) return p[COMPOSE_KEYED](policies) as KeyedPipeline;
  }
  return new Pipeline(policies as Policy[]);
}

brand(Pipeline, 'Pipeline');

/** A lone gate did not admit the call (`token` < 0): its refusal, or the value it answered. */
function refusedOrAnswered(gate: Gate, token: number): Promise<unknown> {
  if (token === ANSWERED) return Promise.resolve((gate as AnsweringGate).answer());
  return Promise.reject(gate.rejection());
}

/**
 * Gate `at` of a gates-only pipeline answered the call: the gates outside it, admitted with
 * `tokens`, are released as after a success with the value, which the call resolves with.
 */
function answeredGates(
  gates: readonly Gate[],
  tokens: readonly number[],
  at: number,
  tryMode: boolean,
): Promise<unknown> {
  const value = (gates[at] as AnsweringGate).answer();
  for (let j = at - 1; j >= 0; j--) releaseOk(gates[j]!, tokens[j]!, value, Number.NaN);
  return Promise.resolve(tryMode ? success(value) : value);
}

/** True for options that ask nothing of the executor: no signal, deadline or criticality. */
function isPlain(options: ExecuteOptions | undefined): boolean {
  return (
    options === undefined ||
    (options.signal === undefined &&
      options.timeout === undefined &&
      options.criticality === undefined)
  );
}

/**
 * The level of `options.criticality`; throws {@link OptionsError} for an unknown one, or for a
 * `signal` that is not an AbortSignal (which `executeSync` does not use, but refuses as
 * `execute` does).
 */
function syncLevel(options: { readonly criticality?: Criticality }): number {
  const signal = (options as ExecuteOptions).signal;
  if (signal !== undefined) {
    const error = signalError(signal);
    if (error !== undefined) throw error;
  }
  if (options.criticality === undefined) return DEFAULT_LEVEL;
  const level = criticalityLevel(options.criticality);
  if (level < 0) throw criticalityError(options.criticality);
  return level;
}

function criticalityError(criticality: unknown): OptionsError {
  return new OptionsError(
    'criticality',
    criticality,
    "'critical-plus', 'critical', 'sheddable-plus' or 'sheddable'",
  );
}

/**
 * Gives `exec` the call's `timeout` (Infinity gives none) and `criticality`, and checks its
 * `signal`; for an invalid one, recycles the record and returns the {@link OptionsError} the
 * call fails with, before anything runs.
 */
function applyCallOptions(exec: Execution, options: ExecuteOptions): OptionsError | undefined {
  const { timeout, criticality, signal } = options;
  if (signal !== undefined) {
    const error = signalError(signal);
    if (error !== undefined) {
      exec.recycle();
      return error;
    }
  }
  let ms = Number.POSITIVE_INFINITY;
  if (timeout !== undefined) {
    try {
      ms = duration(timeout, 'timeout', ms, 0, true);
    } catch (error) {
      exec.recycle();
      return error as OptionsError;
    }
  }
  if (criticality !== undefined) {
    const level = criticalityLevel(criticality);
    if (level < 0) {
      exec.recycle();
      return criticalityError(criticality);
    }
    exec.level = level;
  }
  if (ms !== Number.POSITIVE_INFINITY) exec.limit(ms);
  // Only a pipeline with a coalescing step keeps the key (a keyed pipeline gives one per call);
  // the coalescer checks it.
  if (exec.core.takesKey && options.key !== undefined) exec.d.key = options.key;
  return undefined;
}
