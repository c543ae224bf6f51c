import type { AttemptFailure, Pushback } from '../../policies/shared/pushback.js';
import {
  capped,
  type HeaderValue,
  lookupOf,
  MAX_PUSHBACK_MS,
  type Member,
  nonNegativeInteger,
  parseDictionary,
  parseList,
  serviceLimit,
  valuesOf,
} from './fields.js';

export type { HeaderValue, Pushback };
export { MAX_PUSHBACK_MS };

const DIGITS = /^\d+$/;
const SECONDS = /^\d+(?:\.\d+)?$/;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:mon|tue|wed|thu|fri|sat|sun)';
const LONG_DAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const MONTH = '(?<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(?<h>\\d{2}):(?<min>\\d{2}):(?<s>\\d{2})';
/**
 * The HTTP-date forms of RFC 9110 section 5.6.7, names in any case: the IMF-fixdate
 * `Sun, 06 Nov 1994 08:49:37 GMT`, and the obsolete forms recipients must accept, RFC 850's
 * `Sunday, 06-Nov-94 08:49:37 GMT` and asctime's `Sun Nov  6 08:49:37 1994`.
 */
const HTTP_DATES = [
  `^${DAY},\\s*(?<day>\\d{1,2})\\s+${MONTH}\\s+(?<year>\\d{4})\\s+${TIME}\\s+(?:GMT|UTC)$`,
  `^${LONG_DAY},\\s*(?<day>\\d{1,2})-${MONTH}-(?<year>\\d{2})\\s+${TIME}\\s+(?:GMT|UTC)$`,
  `^${DAY}\\s+${MONTH}\\s+(?<day>\\d{1,2})\\s+${TIME}\\s+(?<year>\\d{4})$`,
].map((source) => new RegExp(source, 'i'));

/** The largest of the values `parse` accepts; undefined when it accepts none. */
function largest(value: HeaderValue, parse: (text: string) => number | undefined) {
  const values = valuesOf(value);
  if (values === undefined) return undefined;
  let best: number | undefined;
  for (const text of values) {
    const ms = parse(text);
    if (ms !== undefined && (best === undefined || ms > best)) best = ms;
  }
  return best;
}

/**
 * An HTTP-date (RFC 9110 section 5.6.7) in ms since the epoch, or undefined: the IMF-fixdate
 * and the two obsolete forms recipients must accept (RFC 850, asctime), names in any case.
 * A two-digit RFC 850 year more than 50 years after `now`'s is taken from the century before.
 */
export function parseHttpDate(text: string, now: number): number | undefined {
  let g: Record<string, string> | undefined;
  for (const form of HTTP_DATES) {
    g = form.exec(text)?.groups;
    if (g !== undefined) break;
  }
  if (g === undefined) return undefined;
  let year = Number(g.year);
  if (g.year!.length === 2) {
    const thisYear = new Date(now).getUTCFullYear();
    year += thisYear - (thisYear % 100);
    if (year > thisYear + 50) year -= 100;
  }
  const day = Number(g.day);
  const [h, min, s] = [Number(g.h), Number(g.min), Number(g.s)];
  if (h > 23 || min > 59 || s > 60) return undefined;
  const ms = Date.UTC(year, MONTHS.indexOf(g.month!.toLowerCase()), day, h, min, s);
  // Date.UTC rolls 31 Feb over into March: such a date is junk. (A leap second, :60, rolls
  // over into the next minute, which is what it means.)
  return new Date(ms - s * 1000).getUTCDate() === day ? ms : undefined;
}

/**
 * The delay a `Retry-After` header asks for, in ms, or undefined when it is absent or junk.
 *
 * - delta-seconds (`120`: digits only) → `120_000`;
 * - an HTTP-date (IMF-fixdate, or the obsolete RFC 850 and asctime forms) → the ms from `now`
 *   (ms since the epoch, e.g. `Date.now()`) to that date, 0 for a date in the past;
 * - several values (repeated lines, or joined by commas) → the largest valid one;
 * - a negative number, a fraction, an empty value or anything else → ignored.
 *
 * At most {@link MAX_PUSHBACK_MS}.
 */
export function parseRetryAfter(value: HeaderValue, now: number): number | undefined {
  return largest(value, (text) => {
    if (DIGITS.test(text)) return capped(Number(text) * 1000);
    const at = parseHttpDate(text, now);
    return at === undefined ? undefined : capped(Math.max(0, at - now));
  });
}

/**
 * gRPC's `grpc-retry-pushback-ms` (gRPC proposal A6): a non-negative integer is the delay in ms
 * (at most {@link MAX_PUSHBACK_MS}); anything else present (negative, a fraction, empty, junk)
 * means the server asks not to retry: `false`. Undefined when absent. Of several values, any
 * that says not to retry wins, else the largest.
 */
export function parseGrpcRetryPushback(value: HeaderValue): number | false | undefined {
  const values = valuesOf(value);
  if (values === undefined) return undefined;
  let best = 0;
  for (const text of values) {
    if (!DIGITS.test(text)) return false;
    best = Math.max(best, capped(Number(text)));
  }
  return best;
}

/**
 * `X-RateLimit-Reset` (and the older drafts' `RateLimit-Reset`), which servers send either as
 * seconds until the reset or as the reset's time. A number (fractions allowed) below 10^9 is
 * seconds from now; from 10^9 (September 2001 as epoch seconds, 31 years as a delay) it is an
 * epoch time in seconds, and from 10^12 an epoch time in ms, giving the ms from `now` to it
 * (0 when past). Rounded up to whole ms, at most {@link MAX_PUSHBACK_MS}; of several values the
 * largest; undefined when absent or junk.
 */
export function parseRateLimitReset(value: HeaderValue, now: number): number | undefined {
  return largest(value, (text) => {
    if (!SECONDS.test(text)) return undefined;
    const n = Number(text);
    const ms = n >= 1e12 ? n - now : n >= 1e9 ? n * 1000 - now : n * 1000;
    return capped(Math.max(0, Math.ceil(ms)));
  });
}

/**
 * The wait the IETF `RateLimit` field asks for (draft-ietf-httpapi-ratelimit-headers-08 to
 * -12, a structured field list such as `"default";r=0;t=10`), in ms, or undefined. An item
 * with neither `r` nor `t` is read by the names a pending revision gives them, `a` and `w`.
 *
 * Only a quota policy with no quota left (`r=0`) asks to wait: `t` seconds (its reset). When
 * such a policy gives no `t`, the window `w` of the policy of that name in `policy` (the
 * `RateLimit-Policy` field, e.g. `"default";q=100;w=60`) is waited instead, the longest the
 * reset can be. Of several exhausted policies, the longest wait. A malformed field, negative or
 * fractional numbers, or no exhausted policy give undefined. At most {@link MAX_PUSHBACK_MS}.
 */
export function parseRateLimit(value: HeaderValue, policy?: HeaderValue): number | undefined {
  const members = parseList(value);
  if (members === undefined) return undefined;
  let policies: Member[] | undefined;
  let best: number | undefined;
  for (const { item, params } of members) {
    const [available, window] = serviceLimit(params);
    if (available !== 0) continue;
    let seconds = window;
    if (seconds === undefined) {
      policies ??= parseList(policy) ?? [];
      seconds = policies.find((p) => p.item === item)?.params.get('w');
    }
    if (!nonNegativeInteger(seconds)) continue;
    const ms = capped(seconds * 1000);
    if (best === undefined || ms > best) best = ms;
  }
  return best;
}

/**
 * The wait the draft-07 `RateLimit` field asks for (a Dictionary such as
 * `limit=100, remaining=0, reset=30`): `reset` seconds when `remaining` is absent or 0, else
 * undefined, as for the older split fields.
 */
function draft7Wait(value: HeaderValue): number | undefined {
  const fields = parseDictionary(value);
  const reset = fields?.get('reset');
  if (!nonNegativeInteger(reset)) return undefined;
  const remaining = fields!.get('remaining');
  return remaining === undefined || remaining === 0 ? capped(reset * 1000) : undefined;
}

/** True when a remaining count is absent or zero: only then does a reset time ask to wait. */
function exhausted(remaining: HeaderValue): boolean {
  const values = valuesOf(remaining);
  return values === undefined || values.some((v) => v !== '' && Number(v) === 0);
}

/**
 * The pushback a response, a headers object or an error carries, read from its headers in this
 * order, the first present and valid one deciding:
 *
 * 1. `grpc-retry-pushback-ms` ({@link parseGrpcRetryPushback}: `false` for "do not retry");
 * 2. `Retry-After` ({@link parseRetryAfter});
 * 3. `RateLimit` with `RateLimit-Policy` ({@link parseRateLimit}), then the draft-07 form of
 *    `RateLimit` (`limit=100, remaining=0, reset=30`: `reset` when `remaining` is absent or 0);
 * 4. `X-RateLimit-Reset`, then `RateLimit-Reset` ({@link parseRateLimitReset}), each only
 *    when its `…-Remaining` header is absent or 0.
 *
 * `source` may be a fetch `Response`, a `Headers` (or anything with a `get(name)`), a plain
 * object of headers (names in any case; string, number or array values), or an object carrying
 * one in `headers`, `response`, `metadata` or `cause`: the errors of axios, got, ky, ofetch,
 * undici and gRPC, and the responses of Node's `http`. Undefined when none gives a delay.
 *
 * `now` (ms since the epoch) is what dates are measured from. @default Date.now()
 */
export function readPushback(source: unknown, now: number = Date.now()): Pushback {
  const get = lookupOf(source, 0);
  if (get === undefined) return undefined;
  const grpc = parseGrpcRetryPushback(get('grpc-retry-pushback-ms'));
  if (grpc !== undefined) return grpc;
  const retryAfter = parseRetryAfter(get('retry-after'), now);
  if (retryAfter !== undefined) return retryAfter;
  const rateLimit = parseRateLimit(get('ratelimit'), get('ratelimit-policy'));
  if (rateLimit !== undefined) return rateLimit;
  const draft7 = draft7Wait(get('ratelimit'));
  if (draft7 !== undefined) return draft7;
  for (const prefix of ['x-ratelimit-', 'ratelimit-']) {
    const reset = get(`${prefix}reset`);
    if (reset !== undefined && reset !== null && exhausted(get(`${prefix}remaining`))) {
      const ms = parseRateLimitReset(reset, now);
      if (ms !== undefined) return ms;
    }
  }
  return undefined;
}

/**
 * A ready-made `retryAfter` option of `retry`: the server pushback carried by the failed
 * attempt's result (a `Response` that `handleResult` retries) or error (see
 * {@link readPushback} for the headers and the shapes it reads), dates measured from
 * `Date.now()`.
 *
 * @example
 * ```ts
 * retry({ handleResult: (r: Response) => r.status === 429, retryAfter: serverPushback });
 * ```
 */
export function serverPushback(failure: AttemptFailure): Pushback {
  return readPushback(failure.error !== undefined ? failure.error : failure.result);
}
