import { ConcurrencyLimitError } from '../../policies/adaptive-limit/errors.js';
import { LoadShedError } from '../../policies/load-shedder/errors.js';
import type { RateLimitDecision } from '../../policies/rate-limiter/decision.js';
import { PROBLEM_CONTENT_TYPE, problemBody, retryAfterValue } from '../headers/write.js';

/** A response the guard sends instead of running the handler. */
export interface Refusal {
  readonly status: number;
  /** Lower-case names; the problem body's content type among them. */
  readonly headers: readonly (readonly [string, string])[];
  /** An RFC 9457 problem, as JSON. */
  readonly body: string;
}

export type HeaderList = readonly (readonly [string, string])[];

/** 429 for a key over its rate: the GCRA's exact wait, rounded up to whole seconds. */
export function quotaExceeded(
  decision: RateLimitDecision,
  headers: HeaderList,
  policy: string,
): Refusal {
  return {
    status: 429,
    headers: [
      ...headers,
      ['retry-after', retryAfterValue(decision.retryAfterMs)],
      ['content-type', PROBLEM_CONTENT_TYPE],
    ],
    body: problemBody({
      type: 'quota-exceeded',
      title: 'Request cannot be satisfied as assigned quota has been exceeded',
      status: 429,
      violatedPolicies: [policy],
    }),
  };
}

/** 503 while the rate limit's store fails and the guard is closed. */
export function storeUnavailable(): Refusal {
  return {
    status: 503,
    headers: [['content-type', PROBLEM_CONTENT_TYPE]],
    body: reducedCapacity('the rate limit store cannot be reached'),
  };
}

/**
 * 499 (nginx's "Client Closed Request") for a request whose client left before its handler
 * ran: nothing reads it, but logs and metrics see why the handler never ran.
 */
export function clientClosed(): Refusal {
  return {
    status: 499,
    headers: [['content-type', PROBLEM_CONTENT_TYPE]],
    body: problemBody({ type: 'about:blank', title: 'Client Closed Request', status: 499 }),
  };
}

/**
 * 504 for a request whose caller's deadline had passed on arrival: any answer would come too
 * late to be used, so none is computed. Not 503: the service has capacity and a retry with
 * the same deadline cannot succeed; 504 is what a gateway answers when the time is up
 * (gRPC's DEADLINE_EXCEEDED maps to it).
 */
export function deadlinePassed(header: string): Refusal {
  return {
    status: 504,
    headers: [['content-type', PROBLEM_CONTENT_TYPE]],
    body: problemBody({
      type: 'about:blank',
      title: 'Deadline exceeded',
      status: 504,
      detail: `the caller's deadline (${header}) had passed when the request arrived`,
    }),
  };
}

/**
 * 503 for a request refused by the load shedder or the adaptive limit, with a `Retry-After`
 * of `waitMs` (see `GuardCore.waitMs`), at least 1 s (the header's unit). A refusal for a
 * deadline shorter than the median latency is a 504 without `Retry-After`.
 */
export function overloaded(error: unknown, headers: HeaderList, waitMs: number): Refusal {
  if (error instanceof ConcurrencyLimitError && error.reason === 'deadline') {
    return {
      status: 504,
      headers: [...headers, ['content-type', PROBLEM_CONTENT_TYPE]],
      body: (bodies.tooShort ??= problemBody({
        type: 'about:blank',
        title: 'Deadline too short',
        status: 504,
        detail: "the time left before the caller's deadline is below the service's median latency",
      })),
    };
  }
  const shed = error instanceof LoadShedError;
  return {
    status: 503,
    headers: [
      ...headers,
      ['retry-after', retryAfterValue(Math.max(1_000, waitMs))],
      ['content-type', PROBLEM_CONTENT_TYPE],
    ],
    body: shed
      ? (bodies.shed ??= reducedCapacity('the service is shedding load'))
      : (bodies.full ??= reducedCapacity('the service is at its concurrency limit')),
  };
}

/** The bodies every refusal of a kind shares, made at the first. */
const bodies: { tooShort?: string; shed?: string; full?: string } = {};

function reducedCapacity(detail: string): string {
  return problemBody({
    type: 'temporary-reduced-capacity',
    title: 'Temporary reduced capacity',
    status: 503,
    detail,
  });
}
