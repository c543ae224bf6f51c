import { OptionsError } from '../../errors/OptionsError.js';
import type { ExecuteOptions } from '../../pipeline/context.js';
import { type Pipeline, pipeline } from '../../pipeline/Pipeline.js';
import type { AdaptiveLimit } from '../../policies/adaptive-limit/AdaptiveLimit.js';
import { AdaptiveLimit as AdaptiveLimitClass } from '../../policies/adaptive-limit/AdaptiveLimit.js';
import {
  adaptiveLimit as makeAdaptiveLimit,
  loadShedder as makeLoadShedder,
} from '../../policies/factories.js';
import { LoadShedError } from '../../policies/load-shedder/errors.js';
import {
  type EventLoopLoadOptions,
  eventLoopLoad,
  type LoadSignal,
} from '../../policies/load-shedder/eventLoopLoad.js';
import { LoadShedder } from '../../policies/load-shedder/LoadShedder.js';
import type { RateLimitDecision } from '../../policies/rate-limiter/decision.js';
import { type Criticality, criticalityLevel } from '../../protocol/criticality.js';
import { checkOptionsObject } from '../../validation/validate.js';
import { runWithInboundContext } from '../context/requestContext.js';
import { clientKey } from './clientKey.js';
import { failureAnswer } from './failures.js';
import {
  type InboundRequest,
  type ResolvedRateLimit,
  resolveCriticality,
  resolveDeadline,
  resolveRateLimit,
  type ServiceGuardOptions,
} from './options.js';
import { RateLimitFields } from './rateLimitFields.js';
import {
  clientClosed,
  deadlinePassed,
  type HeaderList,
  overloaded,
  quotaExceeded,
  type Refusal,
  storeUnavailable,
} from './refusals.js';

/**
 * What an adapter does with a request the guard lets through: sets `headers` on the response
 * and runs the handler (the guard has opened the request context). It returns a promise of the
 * response's end (finished or closed) with its status code, never rejecting, or undefined when
 * the client's {@link Client.ended} tells it.
 */
export type Proceed = (headers: HeaderList) => PromiseLike<number> | undefined;

/**
 * The client of one request, as the guard sees it: a fetch `Request`, or the watch a Node
 * adapter keeps on its response, which makes its signal and its end only when asked.
 */
export interface Client {
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal | undefined;
  /** True once the client went away; read instead of the signal where given. */
  readonly gone?: boolean;
  /** The response's end, for a `proceed` that returns undefined. */
  ended?(): PromiseLike<number>;
}
/** What an adapter does with a request the guard refuses: sends the refusal. */
export type Refuse = (refusal: Refusal) => void;

const NO_HEADERS: HeaderList = [];
const GONE: PromiseLike<number> = Promise.resolve(499);
/** The key of requests whose client address is unknown: they share one limit. */
const UNKNOWN_CLIENT = 'unknown';

/** One inbound request on its way through the guard. */
interface Pending {
  readonly client: Client;
  readonly deadline: number;
  readonly criticality: Criticality | undefined;
  readonly proceed: Proceed;
  readonly refuse: Refuse;
}

/**
 * @internal The framework-neutral part of the service guard: the deadline, the rate limit, then
 * the load shedder and the adaptive limit, in that order (the cheapest refusals first, and no
 * quota spent on a request that arrives too late).
 */
export class GuardCore {
  private readonly rate: ResolvedRateLimit | undefined;
  private readonly fields: RateLimitFields | undefined;
  private readonly deadline: { header: string; max: number } | undefined;
  private readonly criticality: string | ((req: InboundRequest) => Criticality | undefined);
  private readonly gates: Pipeline | undefined;
  private readonly signal: LoadSignal | undefined;
  private readonly limit: AdaptiveLimit | undefined;
  private drainMs = 1_000;
  private drainAt = Number.NEGATIVE_INFINITY;
  /** Whether the adapters answer the library's failures from handlers (option `errors`). */
  readonly mapsErrors: boolean;
  /** What the guard built itself, and disposes. */
  private readonly owned: { dispose(): void }[] = [];

  constructor(options: ServiceGuardOptions | undefined) {
    const o = checkOptionsObject(
      options,
      ['rateLimit', 'concurrency', 'shedding', 'criticality', 'deadline', 'errors'],
      '',
    );
    const errors = o.errors ?? true;
    if (typeof errors !== 'boolean') throw new OptionsError('errors', errors, 'a boolean');
    this.mapsErrors = errors;
    this.rate = resolveRateLimit(o.rateLimit);
    this.fields = this.rate && new RateLimitFields(this.rate.headers, this.rate.legacyHeaders);
    this.deadline = resolveDeadline(o.deadline);
    this.criticality = resolveCriticality(o.criticality);
    const shedder = this.shedderOf(o.shedding);
    this.signal = shedder?.signal;
    this.limit = this.limitOf(o.concurrency);
    const gates = [shedder?.shedder, this.limit].filter((g) => g !== undefined);
    this.gates = gates.length > 0 ? pipeline(...gates) : undefined;
  }

  /** Takes a request through the guard: calls `proceed` or `refuse`, once. */
  handle(req: InboundRequest, client: Client, proceed: Proceed, refuse: Refuse) {
    let deadline = Number.POSITIVE_INFINITY;
    if (this.deadline !== undefined) {
      const value = req.header(this.deadline.header);
      const ms = value === undefined ? Number.NaN : timeoutOf(value);
      if (ms === 0) return refuse(deadlinePassed(this.deadline.header));
      if (ms > 0) deadline = performance.now() + Math.min(ms, this.deadline.max);
    }
    const p: Pending = { client, deadline, criticality: this.criticalityOf(req), proceed, refuse };
    const rate = this.rate;
    if (rate === undefined) return this.admit(p, NO_HEADERS);
    let key: string | undefined;
    let decision: RateLimitDecision | PromiseLike<RateLimitDecision> | undefined;
    try {
      key = rate.key === undefined ? (clientKey(req.ip) ?? UNKNOWN_CLIENT) : rate.key(req);
      if (key !== undefined) {
        decision = rate.limiter.decide(key, rate.cost === undefined ? 1 : rate.cost(req));
      }
    } catch {
      return this.storeFailed(p);
    }
    if (key === undefined) this.admit(p, NO_HEADERS);
    else if (typeof (decision as PromiseLike<unknown> | null)?.then === 'function') {
      (decision as PromiseLike<RateLimitDecision>).then(
        (d) => this.decided(p, d),
        () => this.storeFailed(p),
      );
    } else this.decided(p, decision as RateLimitDecision);
  }

  /**
   * The answer to a handler's failure the library caused (see {@link failureAnswer}), or
   * undefined for any other error. An outbound refusal that carries no wait gets the time the
   * inbound requests take to drain when the guard has a concurrency limit, else 1 s.
   */
  answerFailure(error: unknown): Refusal | undefined {
    return failureAnswer(error, this.limit === undefined ? 1_000 : this.waitMs(undefined));
  }

  /** Stops the load signal's sampling and disposes the policies the guard built. */
  dispose(): void {
    for (const o of this.owned) o.dispose();
  }

  private decided(p: Pending, d: RateLimitDecision): void {
    let headers: HeaderList | undefined;
    try {
      if (!d.degraded) headers = this.fields!.of(d);
    } catch {
      // A store of the user's that decided nothing, or what the headers cannot carry (NaN, < 0).
    }
    if (headers === undefined) this.storeFailed(p);
    else if (d.allowed) this.admit(p, headers);
    else p.refuse(quotaExceeded(d, headers, this.fields!.policy(d)));
  }

  private storeFailed(p: Pending): void {
    if (this.rate!.closed) p.refuse(storeUnavailable());
    else this.admit(p, NO_HEADERS);
  }

  private admit(p: Pending, headers: HeaderList): void {
    const client = p.client;
    const run = (): PromiseLike<number> | undefined => {
      // The client left while the store decided or the request waited for a permit.
      if (gone(client)) {
        p.refuse(clientClosed());
        return GONE;
      }
      return runWithInboundContext(p.deadline, p.criticality, client, () => p.proceed(headers));
    };
    const gates = this.gates;
    if (gates === undefined) {
      run();
      return;
    }
    // Only a queue needs the signal (to leave it when the client goes away); a call with no
    // options takes the pipeline's fastest path.
    const waits = this.limit?.mayWait === true;
    const options: ExecuteOptions | undefined =
      p.criticality !== undefined || waits
        ? { criticality: p.criticality, signal: waits ? client.signal : undefined }
        : undefined;
    // The permit is held until the response ends.
    const held = (): PromiseLike<number> => run() ?? client.ended?.() ?? GONE;
    gates.tryExecute(held, options).then((r) => {
      if (r.ok) return;
      if (r.rejected) p.refuse(overloaded(r.error, headers, this.waitMs(r.error)));
      else if (gone(client)) p.refuse(clientClosed());
    });
  }

  /**
   * How long a refused client should wait, in ms:
   * - shed: the time the load signal's level takes to fall back to 0 if the load stays within
   *   its limits (`eventLoopLoad`: ⌈level ÷ (step / 2)⌉ × interval);
   * - over the concurrency limit: the time the requests in flight and queued take to drain at
   *   the recent latency, `recentLatency × (inFlight + queued) ÷ limit`, worked out at most
   *   every 100 ms (refusals come in floods, and the limit's stats are not free);
   * 1 s when neither knows.
   */
  private waitMs(error: unknown): number {
    if (error instanceof LoadShedError) return this.signal?.settleMs?.() ?? 1_000;
    const limit = this.limit;
    if (limit === undefined) return 1_000;
    const now = performance.now();
    if (now - this.drainAt >= 100) {
      const s = limit.stats();
      const drain = (s.recentLatency * (s.inFlight + s.queueLength)) / s.limit;
      this.drainMs = drain > 0 ? drain : 1_000;
      this.drainAt = now;
    }
    return this.drainMs;
  }

  private criticalityOf(req: InboundRequest): Criticality | undefined {
    const c = this.criticality;
    let value: string | undefined;
    try {
      value = typeof c === 'string' ? req.header(c)?.trim().toLowerCase() : c(req);
    } catch {
      // A criticality function that throws gives the request none, as an unknown value does.
    }
    return value !== undefined && criticalityLevel(value) >= 0 ? (value as Criticality) : undefined;
  }

  private shedderOf(value: unknown): { shedder: LoadShedder; signal?: LoadSignal } | undefined {
    if (value === undefined || value === false) return undefined;
    if (value instanceof LoadShedder) return { shedder: value, signal: value.signal };
    const signal = eventLoopLoad(value === true ? undefined : (value as EventLoopLoadOptions));
    const shedder = makeLoadShedder({ name: 'inbound', signal });
    this.owned.push(signal, shedder);
    return { shedder, signal };
  }

  private limitOf(value: unknown): AdaptiveLimit | undefined {
    if (value === undefined || value === false) return undefined;
    if (value instanceof AdaptiveLimitClass) return value;
    if (value !== true) {
      throw new OptionsError('concurrency', value, 'true, false or an adaptiveLimit()');
    }
    const limit = makeAdaptiveLimit({ name: 'inbound' });
    this.owned.push(limit);
    return limit;
  }
}

function gone(client: Client): boolean {
  return client.gone ?? client.signal?.aborted === true;
}

/** The ms of a deadline header: a non-negative integer; anything else is NaN (ignored). */
function timeoutOf(value: string): number {
  return /^\s*\d{1,15}\s*$/.test(value) ? Number(value) : Number.NaN;
}
