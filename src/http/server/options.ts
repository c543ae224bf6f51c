import { OptionsError } from '../../errors/OptionsError.js';
import type { AdaptiveLimit } from '../../policies/adaptive-limit/AdaptiveLimit.js';
import type { EventLoopLoadOptions } from '../../policies/load-shedder/eventLoopLoad.js';
import type { LoadShedder } from '../../policies/load-shedder/LoadShedder.js';
import type { RateLimitDecision } from '../../policies/rate-limiter/decision.js';
import type { Criticality } from '../../protocol/criticality.js';
import { checkOptionsObject, duration, fn, oneOf, string } from '../../validation/validate.js';
import { CRITICALITY_HEADER, DEADLINE_HEADER } from '../context/headers.js';
import type { RateLimitHeaderVersion } from '../headers/write.js';

/**
 * An inbound request as the guard's options see it, the same in every framework.
 */
export interface InboundRequest {
  /** The method, upper case. */
  readonly method: string;
  /** The request target (path and query) or, for fetch-style handlers, the whole URL. */
  readonly url: string;
  /** The client's address: the socket's peer, or the framework's `req.ip` where it has one. */
  readonly ip: string | undefined;
  /** A header's value (several joined with `, `), by its name in any case. */
  header(name: string): string | undefined;
  /** The framework's own request (`IncomingMessage`, Express', Fastify's, a `Request`). */
  readonly raw: unknown;
}

/**
 * Anything that decides whether a key may take permits: `KeyedRateLimiter` (memory),
 * `RedisRateLimiter` (shared), or a store of your own.
 */
export interface RateLimitStore {
  /** Takes `permits` (default 1) for `key` if it may, and says what is left either way. */
  decide(key: string, permits?: number): RateLimitDecision | PromiseLike<RateLimitDecision>;
}

/** The rate limit of a {@link ServiceGuardOptions}. */
export interface GuardRateLimitOptions {
  /** The store of each key's limit. */
  readonly limiter: RateLimitStore;
  /**
   * The key of a request; undefined lets it through unlimited (a health check).
   * @default the client's address, IPv6 grouped by /56 ({@link clientKey}). Behind a proxy or
   * load balancer every request comes from its address: give a key that reads the client from
   * `X-Forwarded-For` or `Forwarded` as your proxy sets it (Express' `req.ip` with `trust proxy`,
   * Fastify's `request.ip` with `trustProxy`, which the guard takes as `ip` where they exist).
   */
  readonly key?: (req: InboundRequest) => string | undefined;
  /** The permits a request takes. @default 1 */
  readonly cost?: (req: InboundRequest) => number;
  /** The `RateLimit` headers' version, or false for none. @default 'draft-8' */
  readonly headers?: Exclude<RateLimitHeaderVersion, 'legacy'> | false;
  /** Also the legacy `X-RateLimit-Limit`, `-Remaining` and `-Reset`. @default false */
  readonly legacyHeaders?: boolean;
  /**
   * When the store fails (throws, rejects, or decides with `degraded: true`): `'open'` lets the
   * request through without rate limit headers, `'closed'` answers 503. @default 'open'
   */
  readonly onStoreError?: 'open' | 'closed';
}

/** The inbound deadline of a {@link ServiceGuardOptions}. */
export interface GuardDeadlineOptions {
  /** The header with the ms the caller has left. @default "x-timeout-ms" */
  readonly header?: string;
  /** The most a caller may ask for, in ms (≥ 1, or Infinity); longer is cut to it. @default 60000 */
  readonly max?: number;
}

/** Options of {@link serviceGuard}; each part is off unless given (the deadline is on). */
export interface ServiceGuardOptions {
  /** A rate limit per client key, answering 429. @default none */
  readonly rateLimit?: GuardRateLimitOptions;
  /**
   * An adaptive concurrency limit on the requests being handled, answering 503: `true` for
   * `adaptiveLimit({ name: 'inbound' })`, or your own. A request holds its permit until its
   * response ends, so the limit learns the real latency; its `handleResult` sees the response's
   * status code. @default none
   */
  readonly concurrency?: boolean | AdaptiveLimit;
  /**
   * A load shedder driven by this process's event loop, answering 503 to a share of the
   * requests in proportion to the load, the least critical first: `true` for
   * `eventLoopLoad()`'s defaults, its options, or a `loadShedder` of your own. @default none
   */
  readonly shedding?: boolean | EventLoopLoadOptions | LoadShedder;
  /**
   * A request's criticality: the header that carries it, or a function.
   * @default "x-criticality"; requests without one are `critical`
   */
  readonly criticality?: string | ((req: InboundRequest) => Criticality | undefined);
  /** The inbound deadline, or false to ignore it. @default { header: "x-timeout-ms", max: 60000 } */
  readonly deadline?: boolean | GuardDeadlineOptions;
  /**
   * Answer a handler's failure that the library caused, instead of the framework's 500: 504
   * for a deadline that passed (`TimeoutError`), 503 with `Retry-After` for an outbound call a
   * policy refused (open breaker, limits, shedder), 502 for a downstream that failed
   * (`HttpStatusError`, a network error of the protected fetch); any other error goes to the
   * framework as before. Applies to `node()`, `fetch()`, `hono` and the Fastify plugin
   * (Express: add `guard.errors` after the routes). @default true
   */
  readonly errors?: boolean;
}

/** Defaults of {@link ServiceGuardOptions}. */
export const serviceGuardDefaults = Object.freeze({
  headers: 'draft-8' as const,
  legacyHeaders: false,
  onStoreError: 'open' as const,
  deadlineHeader: DEADLINE_HEADER,
  maxDeadline: 60_000,
  criticalityHeader: CRITICALITY_HEADER,
});

const HEADER_VERSIONS = ['draft-6', 'draft-7', 'draft-8', 'draft-12', 'latest'] as const;

/** @internal */
export interface ResolvedRateLimit {
  limiter: RateLimitStore;
  key: ((req: InboundRequest) => string | undefined) | undefined;
  cost: ((req: InboundRequest) => number) | undefined;
  headers: Exclude<RateLimitHeaderVersion, 'legacy'> | false;
  legacyHeaders: boolean;
  closed: boolean;
}

/** @internal */
export function resolveRateLimit(value: unknown): ResolvedRateLimit | undefined {
  if (value === undefined) return undefined;
  const o = checkOptionsObject(
    value,
    ['limiter', 'key', 'cost', 'headers', 'legacyHeaders', 'onStoreError'],
    'rateLimit',
  );
  const limiter = o.limiter as RateLimitStore | undefined;
  if (typeof limiter !== 'object' || limiter === null || typeof limiter.decide !== 'function') {
    throw new OptionsError(
      'rateLimit.limiter',
      limiter,
      'a store with decide(key, permits) (a KeyedRateLimiter or RedisRateLimiter)',
    );
  }
  const legacyHeaders = o.legacyHeaders ?? serviceGuardDefaults.legacyHeaders;
  if (typeof legacyHeaders !== 'boolean') {
    throw new OptionsError('rateLimit.legacyHeaders', legacyHeaders, 'a boolean');
  }
  return {
    limiter,
    key: fn(o.key, 'rateLimit.key', undefined),
    cost: fn(o.cost, 'rateLimit.cost', undefined),
    headers:
      o.headers === false
        ? false
        : oneOf(o.headers, 'rateLimit.headers', serviceGuardDefaults.headers, HEADER_VERSIONS),
    legacyHeaders,
    closed:
      oneOf(o.onStoreError, 'rateLimit.onStoreError', serviceGuardDefaults.onStoreError, [
        'open',
        'closed',
      ]) === 'closed',
  };
}

/** @internal The header and cap of the inbound deadline, or undefined when ignored. */
export function resolveDeadline(value: unknown): { header: string; max: number } | undefined {
  if (value === false) return undefined;
  const o = checkOptionsObject(value === true ? undefined : value, ['header', 'max'], 'deadline');
  return {
    header: string(o.header, 'deadline.header', serviceGuardDefaults.deadlineHeader).toLowerCase(),
    max: duration(o.max, 'deadline.max', serviceGuardDefaults.maxDeadline, 1, true),
  };
}

/** @internal The criticality option as a function of the request. */
export function resolveCriticality(
  value: unknown,
): string | ((req: InboundRequest) => Criticality | undefined) {
  if (typeof value === 'function') return value as (req: InboundRequest) => Criticality;
  return string(value, 'criticality', serviceGuardDefaults.criticalityHeader).toLowerCase();
}
