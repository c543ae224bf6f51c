import { UsageError } from '../../errors/OptionsError.js';
import type { ExecutionContext } from '../../pipeline/context.js';
import type { Pipeline } from '../../pipeline/Pipeline.js';
import type { AttemptFailure, Pushback } from '../../policies/shared/pushback.js';
import { KeyedInstances } from '../../registry/KeyedInstances.js';
import { duration } from '../../validation/validate.js';
import { requestContext } from '../context/requestContext.js';
import { readPushback } from '../headers/parse.js';
import { HttpStatusError, PushbackTooLongError } from './errors.js';
import {
  type FetchFunction,
  type ProtectedFetchOptions,
  type ResolvedFetchOptions,
  resolveFetchOptions,
} from './options.js';
import { OriginPolicies, type OriginStats, originKind } from './origin.js';
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
  stats(): OriginStats[];
  /** Drops every origin's policies and timers; later calls reject with a `UsageError`. */
  dispose(): void;
}

/** One call: its attempts' responses, and what the pushback decided. */
class Call {
  /** Attempts started. */
  attempts = 0;
  /** Set once the call settled: a response that comes later is released at once. */
  done = false;
  readonly responses: Response[] = [];
  /** A pushback longer than the call may wait, on the response that asked for it. */
  pushback:
    | { readonly response: Response; readonly wait: number; readonly allowed: number }
    | undefined;

  constructor(
    readonly out: Outgoing,
    /** When the call must end, on the clock's scale. */
    readonly deadline: number,
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
  const { clock } = o;
  const byResponse = new WeakMap<Response, Call>();

  const retryAfter = (failure: AttemptFailure<Response>): Pushback => {
    const response = failure.result;
    if (response === undefined) return undefined;
    const wait = readPushback(response);
    if (typeof wait !== 'number') return wait;
    const call = byResponse.get(response);
    const allowed = Math.min(
      o.maxDelay,
      call === undefined ? Infinity : call.deadline - clock.now(),
    );
    if (wait <= allowed) return wait;
    if (call !== undefined) call.pushback = { response, wait, allowed };
    return false;
  };

  // The policies of one origin, validated now by building (and dropping) a first set.
  const make = (origin: string) => new OriginPolicies(origin, o, retryAfter);
  make('http://validation.invalid').dispose();
  const origins = new KeyedInstances(originKind(make), clock, o.maxOrigins, o.originIdleTimeout);
  let disposed = false;

  const call = async (input: FetchInput, init?: ProtectedInit): Promise<Response> => {
    if (disposed) throw new UsageError('This protected fetch was disposed');
    const own =
      init?.timeout === undefined ? Infinity : duration(init.timeout, 'timeout', Infinity, 0);
    const out = outgoing(input, init);
    const fetchImpl: FetchFunction = o.fetch ?? globalThis.fetch;
    if (out.origin === undefined) return fetchImpl(input, init as RequestInit);
    const policies = origins.get(out.origin);
    const pipeline = choose(policies, out, init, o);
    const context = requestContext();
    const timeLeft = Math.min(
      o.timeout,
      own,
      context === undefined ? Infinity : Math.max(0, context.deadline - performance.now()),
    );
    const c = new Call(
      out,
      clock.now() + timeLeft,
      keptSignal(init?.signal),
      init?.criticality ?? context?.criticality,
      pipeline === policies.hedged && policies.hedge !== undefined,
    );
    const attempt = (ctx: ExecutionContext) => send(c, ctx, fetchImpl, byResponse, o);
    policies.active++;
    let response: Response;
    try {
      response = await pipeline.execute(attempt, {
        timeout: Math.min(o.timeout, own),
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
    const pushback = c.pushback;
    if (pushback !== undefined && pushback.response === response) {
      throw new PushbackTooLongError(response, out.url, pushback.wait, pushback.allowed);
    }
    if (o.failedResponse === 'reject' && !response.ok) {
      throw new HttpStatusError(response, out.url, c.attempts);
    }
    return response;
  };

  function stats(origin: string | URL): OriginStats | undefined;
  function stats(): OriginStats[];
  function stats(origin?: string | URL): OriginStats | OriginStats[] | undefined {
    if (origin === undefined) {
      const all: OriginStats[] = [];
      origins.forEachLive((_, p) => all.push(p.stats()));
      return all;
    }
    const key = new URL(String(origin)).origin;
    return origins.peek(key)?.stats();
  }
  const dispose = (): void => {
    disposed = true;
    origins.clear();
  };
  const fetch2 = Object.assign(call, { stats, dispose }) as ProtectedFetch;
  const disposeSymbol = (Symbol as { dispose?: symbol }).dispose;
  if (disposeSymbol !== undefined) Object.defineProperty(fetch2, disposeSymbol, { value: dispose });
  return fetch2;
}

/** Which of the origin's pipelines a request takes: retried (and hedged) only when safe to repeat. */
function choose(
  p: OriginPolicies,
  out: Outgoing,
  init: ProtectedInit | undefined,
  o: ResolvedFetchOptions,
): Pipeline<Response> {
  const idempotent =
    init?.idempotent ??
    (o.idempotent || o.methods.has(out.method) || out.headers.has('idempotency-key'));
  if (!idempotent || init?.retry === false || !out.replayable) return p.once;
  return p.hedged;
}

/** One attempt: the request with the time left and criticality in its headers. */
async function send(
  c: Call,
  ctx: ExecutionContext,
  fetchImpl: FetchFunction,
  byResponse: WeakMap<Response, Call>,
  o: ResolvedFetchOptions,
): Promise<Response> {
  c.attempts++;
  // Earlier responses were failures the retry moved past; a hedge may still return one.
  if (!c.hedged) c.releaseAll(undefined);
  const signal = ctx.signal;
  if (signal.aborted) throw signal.reason;
  const headers = new Headers(c.out.headers);
  if (o.deadlineHeader !== undefined && Number.isFinite(ctx.timeLeft)) {
    headers.set(o.deadlineHeader, String(Math.floor(ctx.timeLeft)));
  }
  if (o.criticalityHeader !== undefined && c.criticality !== undefined) {
    headers.set(o.criticalityHeader, c.criticality);
  }
  // The attempt's own controller follows the pipeline's signal (timeouts, hedge losers) only
  // until the headers arrive, so that no timer of ours aborts a body the caller is reading.
  const controller = new AbortController();
  const abort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', abort);
  const body = c.out.body();
  let response: Response;
  try {
    response = await fetchImpl(c.out.url, {
      ...c.out.init,
      method: c.out.method,
      headers,
      body,
      signal:
        c.keep === undefined ? controller.signal : AbortSignal.any([controller.signal, c.keep]),
    });
  } finally {
    signal.removeEventListener('abort', abort);
  }
  if (c.done || signal.aborted) {
    release(response);
    throw signal.aborted
      ? signal.reason
      : new DOMException('The call already settled', 'AbortError');
  }
  c.responses.push(response);
  byResponse.set(response, c);
  return response;
}
