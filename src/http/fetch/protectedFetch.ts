import type { ExecutionContext } from '../../pipeline/context.js';
import { requestContext } from '../context/requestContext.js';
import { type CallState, FetchEngine } from './engine.js';
import { HttpStatusError, markDownstreamFailure, PushbackTooLongError } from './errors.js';
import {
  type FetchFunction,
  type ProtectedFetchOptions,
  type ResolvedFetchOptions,
  resolveFetchOptions,
} from './options.js';
import type { OriginStats } from './origin.js';
import {
  type FetchInput,
  type Outgoing,
  outgoing,
  type ProtectedInit,
  release,
} from './request.js';

/** A function of `fetch`'s shape that runs each request through the protection of its origin. */
export interface ProtectedFetch {
  (input: FetchInput, init?: ProtectedInit): Promise<Response>;
  /** The figures of one origin (`https://api.example`, or any URL of it), or of every origin held. */
  stats(origin: string | URL): OriginStats | undefined;
  /** The figures of every origin held. */
  stats(): OriginStats[];
  /** Drops every origin's policies and timers; later calls reject with a `UsageError`. */
  dispose(): void;
}

/** One call: its attempts and their responses. */
class Call {
  /** Attempts started. */
  attempts = 0;
  /** Set once the call settled: a response that comes later is released at once. */
  done = false;
  readonly responses: Response[] = [];
  constructor(
    readonly out: Outgoing,
    readonly state: CallState,
    /** The caller's and the request context's signals: they still cancel a body being read. */
    readonly keep: AbortSignal | undefined,
    readonly criticality: string | undefined,
    readonly hedged: boolean,
  ) {}

  /** Lets go of every response but `kept`. */
  releaseAll(kept: Response | undefined): void {
    for (const r of this.responses) if (r !== kept) release(r);
    this.responses.length = 0;
  }
}

function keptSignal(signal: AbortSignal | null | undefined): AbortSignal | undefined {
  const ambient = requestContext()?.signal;
  const own = signal ?? undefined;
  if (own === undefined || ambient === undefined || own === ambient) return own ?? ambient;
  return AbortSignal.any([own, ambient]);
}

/**
 * A function of `fetch`'s shape that runs every request through a pipeline kept per origin:
 * retries of idempotent requests within a retry budget, server pushback first, a per-attempt
 * timeout and one deadline, a circuit breaker that also trips on a run of failures, an adaptive
 * concurrency limit, and hedging when asked for. With no options it is the standard preset
 * ({@link standardPresetDefaults}); the options are checked here, with an `OptionsError` naming
 * the field, the value and the valid range.
 *
 * Nothing runs at creation: each origin's policies are made on its first request, kept for at
 * most `maxOrigins` origins, and dropped after `originIdleTimeout` unused.
 *
 * @example
 * ```ts
 * const fetch2 = protectedFetch();
 * const res = await fetch2('https://api.example/items');
 * fetch2.stats('https://api.example')?.breaker?.state; // 'closed'
 * ```
 */
export function protectedFetch(options?: ProtectedFetchOptions): ProtectedFetch {
  const o = resolveFetchOptions(options);
  const engine = new FetchEngine(o);

  const call = async (input: FetchInput, init?: ProtectedInit): Promise<Response> => {
    const out = outgoing(input, init);
    const fetchImpl: FetchFunction = o.fetch ?? globalThis.fetch;
    if (out.origin === undefined) return fetchImpl(input, init as RequestInit);
    const begun = engine.begin({
      origin: out.origin,
      method: out.method,
      hasIdempotencyKey: out.headers?.has('idempotency-key') === true,
      replayable: out.replayable,
      idempotent: init?.idempotent,
      retry: init?.retry,
      timeout: init?.timeout,
    });
    const { policies, state } = begun;
    const c = new Call(
      out,
      state,
      keptSignal(init?.signal),
      init?.criticality ?? requestContext()?.criticality,
      begun.hedged,
    );
    const attempt = (ctx: ExecutionContext) => send(c, ctx, fetchImpl, engine, o);
    policies.active++;
    let response: Response;
    try {
      response = await begun.pipeline.execute(attempt, {
        timeout: begun.timeout,
        ...(init?.signal ? { signal: init.signal } : {}),
        ...(init?.criticality === undefined ? {} : { criticality: init.criticality }),
      });
    } catch (error) {
      c.done = true;
      c.releaseAll(undefined);
      throw error;
    } finally {
      policies.active--;
    }
    c.done = true;
    c.releaseAll(response);
    const pushback = state.pushback;
    if (pushback !== undefined && pushback.response === response) {
      throw new PushbackTooLongError(response, out.url, pushback.wait, pushback.allowed);
    }
    if (o.failedResponse === 'reject' && !response.ok) {
      throw new HttpStatusError(response, out.url, c.attempts);
    }
    return response;
  };

  const dispose = (): void => engine.dispose();
  const fetch2 = Object.assign(call, {
    stats: engine.stats.bind(engine),
    dispose,
  }) as ProtectedFetch;
  const disposeSymbol = (Symbol as { dispose?: symbol }).dispose;
  if (disposeSymbol !== undefined) Object.defineProperty(fetch2, disposeSymbol, { value: dispose });
  return fetch2;
}

function setHeader(headers: Headers | Record<string, string>, name: string, value: string): void {
  if (headers instanceof Headers) headers.set(name, value);
  else headers[name] = value;
}

/** One attempt: the request with the time left and criticality in its headers. */
async function send(
  c: Call,
  ctx: ExecutionContext,
  fetchImpl: FetchFunction,
  engine: FetchEngine,
  o: ResolvedFetchOptions,
): Promise<Response> {
  c.attempts++;
  // Earlier responses were failures the retry moved past; a hedge may still return one.
  if (!c.hedged) c.releaseAll(undefined);
  const signal = ctx.signal;
  if (signal.aborted) throw signal.reason;
  // A plain record when the caller gave no headers: fetch reads one as cheaply as a `Headers`.
  const headers: Headers | Record<string, string> =
    c.out.headers === undefined ? {} : new Headers(c.out.headers);
  if (o.deadlineHeader !== undefined && Number.isFinite(ctx.timeLeft)) {
    setHeader(headers, o.deadlineHeader, String(Math.floor(ctx.timeLeft)));
  }
  if (o.criticalityHeader !== undefined && c.criticality !== undefined) {
    setHeader(headers, o.criticalityHeader, c.criticality);
  }
  // The attempt's signal itself goes to fetch: a second controller following it would cost a
  // listener per attempt (microseconds on Node 20). It aborts only while the attempt runs (its
  // timeout, a hedge loser's cancellation, the caller's signal): once the attempt has returned its
  // response, no timer of the pipeline aborts it, so a body the caller reads is never cut by ours.
  const body = c.out.body();
  let response: Response;
  try {
    response = await fetchImpl(c.out.url, {
      ...c.out.init,
      method: c.out.method,
      headers,
      body,
      signal: c.keep === undefined ? signal : AbortSignal.any([signal, c.keep]),
    });
  } catch (error) {
    // Not a cut of ours (a timeout, a hedge loser) nor the caller's: the request itself failed.
    if (!signal.aborted && !c.keep?.aborted) markDownstreamFailure(error);
    throw error;
  }
  if (c.done || signal.aborted) {
    release(response);
    throw signal.aborted
      ? signal.reason
      : new DOMException('The call already settled', 'AbortError');
  }
  c.responses.push(response);
  engine.track(response, c.state);
  return response;
}
