import type { BreakwaterError } from '../../errors/BreakwaterError.js';
import { rejectionReached } from '../../errors/PolicyRejectedError.js';
import { TimeoutError } from '../../errors/TimeoutError.js';
import { adaptiveLimitCodes } from '../../policies/adaptive-limit/errors.js';
import { BrokenCircuitError } from '../../policies/circuit-breaker/errors.js';
import { RateLimitedError } from '../../policies/rate-limiter/errors.js';
import { RetryExhaustedError } from '../../policies/retry/errors.js';
import { HttpStatusError, isDownstreamFailure, PushbackTooLongError } from '../fetch/errors.js';
import { PROBLEM_CONTENT_TYPE, problemBody, retryAfterValue } from '../headers/write.js';
import type { Refusal } from './refusals.js';

/** Most `RetryExhaustedError`s nested in one another that are followed to the last failure. */
const MAX_DEPTH = 8;

/**
 * The answer to a handler's failure that the library caused, or undefined for any other error
 * (left to the framework). `fallbackWaitMs` is the `Retry-After` of an outbound refusal that
 * carries no wait of its own.
 *
 * - 504: a `TimeoutError` (a call or a pipeline ran out of the request's deadline), or an
 *   adaptive limit's `ERR_BREAKWATER_DEADLINE_TOO_SHORT`;
 * - 503 `temporary-reduced-capacity`: a policy refused an outbound call without making it (an
 *   open breaker, a rate limiter, a bulkhead, an adaptive limit, a load shedder), or the
 *   downstream asked for a wait longer than the call could make (`PushbackTooLongError`);
 *   `Retry-After` is the breaker's time until half-open, the limiter's or the downstream's wait,
 *   else `fallbackWaitMs`, at least 1 s;
 * - 502: the downstream failed (`HttpStatusError`, a network error of the protected fetch);
 * - a `RetryExhaustedError`: as its last failure; a last response that failed is a 502.
 *
 * The body is an RFC 9457 problem with the error's `code` where it has one: never its message
 * or stack, which name internal hosts and policies.
 */
export function failureAnswer(error: unknown, fallbackWaitMs: number): Refusal | undefined {
  let e = error;
  for (let depth = 0; e instanceof RetryExhaustedError && depth < MAX_DEPTH; depth++) {
    const last: unknown = e.result;
    // Retries that ran out on results (responses): the downstream's failure.
    if (!(last instanceof Error)) return badGateway(e.code);
    e = last;
  }
  if (e instanceof TimeoutError) return deadlineExceeded(e.code);
  if (e instanceof PushbackTooLongError) return reducedCapacity(e.code, e.wait);
  if (e instanceof HttpStatusError) return badGateway(e.code);
  const reached = rejectionReached(e);
  if (reached === false) {
    const code = (e as BreakwaterError).code;
    if (code === adaptiveLimitCodes.DeadlineTooShort) return deadlineExceeded(code);
    const wait =
      e instanceof BrokenCircuitError || e instanceof RateLimitedError ? e.retryAfter : Number.NaN;
    return reducedCapacity(code, Number.isFinite(wait) ? wait : fallbackWaitMs);
  }
  if (isDownstreamFailure(e)) return badGateway(undefined);
  return undefined;
}

function answer(status: number, body: Record<string, unknown>, retryAfterMs?: number): Refusal {
  const headers: [string, string][] = [['content-type', PROBLEM_CONTENT_TYPE]];
  if (retryAfterMs !== undefined) {
    headers.push(['retry-after', retryAfterValue(Math.max(1_000, retryAfterMs))]);
  }
  return { status, headers, body: JSON.stringify(body) };
}

/** The problem's members, with the error's `code` as an extension member when it has one. */
function problem(
  status: number,
  type: string,
  title: string,
  detail: string,
  code: string | undefined,
): Record<string, unknown> {
  const body = JSON.parse(problemBody({ status, type, title, detail })) as Record<string, unknown>;
  if (code !== undefined) body.code = code;
  return body;
}

function deadlineExceeded(code: string): Refusal {
  return answer(
    504,
    problem(
      504,
      'about:blank',
      'Gateway Timeout',
      "a call to a dependency could not finish before the request's deadline",
      code,
    ),
  );
}

function reducedCapacity(code: string, waitMs: number): Refusal {
  return answer(
    503,
    problem(
      503,
      'temporary-reduced-capacity',
      'Temporary reduced capacity',
      'a dependency of the service is refusing calls for now',
      code,
    ),
    waitMs,
  );
}

function badGateway(code: string | undefined): Refusal {
  return answer(
    502,
    problem(502, 'about:blank', 'Bad Gateway', 'a dependency of the service failed', code),
  );
}
