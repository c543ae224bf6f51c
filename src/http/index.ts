/**
 * breakwater/http: where services meet the library.
 *
 * - `protectedFetch()` (and `protectedDispatch()` for undici): a fetch that runs every request
 *   through the standard preset, per origin;
 * - `serviceGuard()`: middleware for node:http, Express and connect, Fastify, Hono and
 *   fetch-style handlers (rate limit per client with RateLimit headers, adaptive concurrency
 *   limit, load shedding, deadlines, handler failures answered);
 * - `runWithRequestContext()`: one deadline, criticality and signal for everything a request's
 *   handler does;
 * - the header toolkit: `readPushback`, `readRateLimit`, `rateLimitHeaders`, `problemBody`.
 *
 * No framework is imported, and nothing runs at import: timers, samplers and AsyncLocalStorage
 * start with first use.
 *
 * @module
 */

export { CRITICALITY_HEADER, DEADLINE_HEADER } from './context/headers.js';
export {
  type RequestContext,
  type RequestContextInit,
  requestContext,
  requestTimeLeft,
  runWithRequestContext,
} from './context/requestContext.js';
export {
  type Dispatch,
  type DispatchController,
  type DispatchHandler,
  type DispatchOptions,
  type ProtectedDispatchInterceptor,
  protectedDispatch,
} from './fetch/dispatchInterceptor.js';
export {
  FetchErrorCode,
  HttpStatusError,
  PushbackTooLongError,
} from './fetch/errors.js';
export {
  type FetchFunction,
  type ProtectedFetchOptions,
  type ProtectedRetryOptions,
  standardPresetDefaults,
} from './fetch/options.js';
export type { OriginStats } from './fetch/origin.js';
export { type ProtectedFetch, protectedFetch } from './fetch/protectedFetch.js';
export type {
  FetchBody,
  FetchInput,
  ProtectedInit,
  ProtectedRequestInit,
} from './fetch/request.js';
export {
  type HeaderValue,
  MAX_PUSHBACK_MS,
  parseGrpcRetryPushback,
  parseHttpDate,
  parseRateLimit,
  parseRateLimitReset,
  parseRetryAfter,
  readPushback,
  serverPushback,
} from './headers/parse.js';
export {
  type RateLimitPolicyState,
  type RateLimitShape,
  type RateLimitState,
  readRateLimit,
} from './headers/read.js';
export {
  PROBLEM_CONTENT_TYPE,
  type ProblemInit,
  policyName,
  problemBody,
  type RateLimitHeaderVersion,
  type RateLimitQuota,
  rateLimitHeaders,
  retryAfterValue,
} from './headers/write.js';
export { clientKey } from './server/clientKey.js';
export type { FetchHandler, HonoContextLike, HonoMiddleware } from './server/fetchAdapters.js';
export type {
  ConnectErrorMiddleware,
  ConnectMiddleware,
  FastifyErrorHandler,
  FastifyLike,
  FastifyPlugin,
  FastifyReplyLike,
  NodeHandler,
  NodeRequestLike,
  NodeResponseLike,
} from './server/nodeAdapters.js';
export {
  type GuardDeadlineOptions,
  type GuardRateLimitOptions,
  type InboundRequest,
  type RateLimitStore,
  type ServiceGuardOptions,
  serviceGuardDefaults,
} from './server/options.js';
export type { Refusal } from './server/refusals.js';
export { type ServiceGuard, serviceGuard } from './server/serviceGuard.js';
