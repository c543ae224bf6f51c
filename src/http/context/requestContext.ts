import { OptionsError } from '../../errors/OptionsError.js';
import { setAmbientOptions } from '../../pipeline/ambient.js';
import type { ExecuteOptions } from '../../pipeline/context.js';
import { type Criticality, criticalityLevel } from '../../protocol/criticality.js';
import { callOptions } from './callOptions.js';

/**
 * What an inbound request gives everything its handler does: the protected fetch and every
 * pipeline called within it read it, with no parameter passing.
 */
export interface RequestContext {
  /**
   * When the request must be answered, on `performance.now()`'s scale; Infinity for none.
   * Calls made within it end by then (`execute`'s `timeout` is the time left, or its own when
   * shorter), and the protected fetch sends the time left downstream.
   */
  readonly deadline: number;
  /** How much the request matters when load must be shed; undefined: each call's own. */
  readonly criticality: Criticality | undefined;
  /** Aborted when the client goes away; calls made within it are cancelled with it. */
  readonly signal: AbortSignal | undefined;
}

/** What {@link runWithRequestContext} takes. */
export interface RequestContextInit {
  /** The time left, in ms (≥ 0); Infinity or left out for none. */
  readonly timeout?: number;
  /** The deadline itself, on `performance.now()`'s scale; the earlier of it and `timeout` applies. */
  readonly deadline?: number;
  readonly criticality?: Criticality;
  readonly signal?: AbortSignal;
}

interface Store<T> {
  run<R>(store: T, fn: () => R): R;
  getStore(): T | undefined;
}

interface AsyncHooksModule {
  AsyncLocalStorage: new <T>() => Store<T>;
}

/**
 * The store of the current context. Node (20.16 and later), Deno, Bun and workerd with
 * `nodejs_compat` give an AsyncLocalStorage through `process.getBuiltinModule`; it is looked up
 * at the first context opened, never at module load (edge runtimes forbid I/O there). Where
 * there is none, a context holds only while its function runs synchronously: calls made after
 * its first `await` do not see it and must be given `timeout`, `signal` and `criticality`.
 */
let store: Store<RequestContext> | undefined;
let syncContext: RequestContext | undefined;

function storeOf(): Store<RequestContext> | null {
  if (store !== undefined) return store;
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const hooks = proc?.getBuiltinModule?.('node:async_hooks') as AsyncHooksModule | undefined;
  const Als =
    hooks?.AsyncLocalStorage ??
    (globalThis as { AsyncLocalStorage?: AsyncHooksModule['AsyncLocalStorage'] }).AsyncLocalStorage;
  if (Als === undefined) return null;
  store = new Als<RequestContext>();
  return store;
}

/** The context of the request being handled, or undefined outside any. */
export function requestContext(): RequestContext | undefined {
  return store !== undefined ? store.getStore() : syncContext;
}

/**
 * Milliseconds left before the current request's deadline, never below 0; Infinity outside a
 * request or for a request with no deadline.
 */
export function requestTimeLeft(): number {
  const deadline = requestContext()?.deadline ?? Number.POSITIVE_INFINITY;
  return Math.max(0, deadline - performance.now());
}

function withContext(options: ExecuteOptions | undefined): ExecuteOptions | undefined {
  const context = requestContext();
  return context === undefined ? options : callOptions(options, context);
}

/**
 * Runs `fn` with `init` as the request context of everything it does. A context opened within
 * another keeps the earlier deadline, and the outer criticality and signal where it gives none.
 * The server middleware opens one per request; call it yourself where a request enters in
 * another way (a queue consumer, a gRPC handler).
 *
 * Throws {@link OptionsError} for a negative or non-numeric `timeout` or `deadline`, an unknown
 * `criticality` or a `signal` that is not an AbortSignal.
 *
 * @example
 * ```ts
 * await runWithRequestContext({ timeout: 300, criticality: 'sheddable' }, () =>
 *   api.execute(({ timeLeft }) => work(timeLeft)), // timeLeft ≤ 300
 * );
 * ```
 */
export function runWithRequestContext<T>(init: RequestContextInit, fn: () => T): T {
  const outer = requestContext();
  const context: RequestContext = {
    deadline: Math.min(deadlineOf(init), outer?.deadline ?? Number.POSITIVE_INFINITY),
    criticality: criticalityOf(init.criticality) ?? outer?.criticality,
    signal: signalOf(init.signal, outer?.signal),
  };
  return enter(context, outer, fn);
}

/** @internal Where a context's signal comes from when it is made only if something reads it. */
export interface SignalSource {
  readonly signal: AbortSignal | undefined;
}

/** A context whose signal (its source's, joined with the outer context's) is made at first read. */
class LazySignalContext implements RequestContext {
  private made: AbortSignal | null | undefined = undefined;
  constructor(
    readonly deadline: number,
    readonly criticality: Criticality | undefined,
    private readonly source: SignalSource,
    private readonly outer: RequestContext | undefined,
  ) {}
  get signal(): AbortSignal | undefined {
    if (this.made === undefined) {
      this.made = signalOf(this.source.signal, this.outer?.signal) ?? null;
    }
    return this.made ?? undefined;
  }
}

/**
 * @internal {@link runWithRequestContext} for the service guard, which has checked its
 * deadline and criticality: the client's signal is asked of `source` only when something in
 * the request reads it (an AbortController costs microseconds a request on Node 20).
 */
export function runWithInboundContext<T>(
  deadline: number,
  criticality: Criticality | undefined,
  source: SignalSource,
  fn: () => T,
): T {
  const outer = requestContext();
  const context = new LazySignalContext(
    Math.min(deadline, outer?.deadline ?? Number.POSITIVE_INFINITY),
    criticality ?? outer?.criticality,
    source,
    outer,
  );
  return enter(context, outer, fn);
}

function enter<T>(context: RequestContext, outer: RequestContext | undefined, fn: () => T): T {
  setAmbientOptions(withContext);
  const als = storeOf();
  if (als !== null) return als.run(context, fn);
  syncContext = context;
  try {
    return fn();
  } finally {
    syncContext = outer;
  }
}

function deadlineOf(init: RequestContextInit): number {
  let deadline = Number.POSITIVE_INFINITY;
  if (init.timeout !== undefined) {
    if (typeof init.timeout !== 'number' || !(init.timeout >= 0)) {
      throw new OptionsError('timeout', init.timeout, 'a number of ms ≥ 0, or Infinity');
    }
    deadline = performance.now() + init.timeout;
  }
  if (init.deadline !== undefined) {
    if (typeof init.deadline !== 'number' || Number.isNaN(init.deadline)) {
      throw new OptionsError('deadline', init.deadline, "a time on performance.now()'s scale");
    }
    deadline = Math.min(deadline, init.deadline);
  }
  return deadline;
}

function criticalityOf(criticality: Criticality | undefined): Criticality | undefined {
  if (criticality !== undefined && criticalityLevel(criticality) < 0) {
    throw new OptionsError(
      'criticality',
      criticality,
      "'critical-plus', 'critical', 'sheddable-plus' or 'sheddable'",
    );
  }
  return criticality;
}

function signalOf(
  signal: AbortSignal | undefined,
  outer: AbortSignal | undefined,
): AbortSignal | undefined {
  if (signal === undefined) return outer;
  if (!(signal instanceof AbortSignal)) {
    throw new OptionsError('signal', signal, 'an AbortSignal');
  }
  return outer === undefined || outer === signal ? signal : AbortSignal.any([signal, outer]);
}
