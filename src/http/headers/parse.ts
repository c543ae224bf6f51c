import type { AttemptFailure, Pushback } from '../../policies/shared/pushback.js';
import { MAX_DURATION_MS } from '../../validation/validate.js';

export type { Pushback };

/**
 * A header's value as HTTP clients hand it out: a string (`Headers.get`, several lines joined
 * by ", "), an array of lines (Node's `IncomingHttpHeaders`, gRPC metadata), a number, or
 * null/undefined when absent.
 */
export type HeaderValue = string | number | readonly unknown[] | null | undefined;

/**
 * The longest delay a parser returns, 2^31 − 1 ms (about 24.8 days, the longest a timer can
 * wait): a value beyond it is returned as this, never as Infinity or an overflowed number.
 */
export const MAX_PUSHBACK_MS = MAX_DURATION_MS;

const DIGITS = /^\d+$/;
const SECONDS = /^\d+(?:\.\d+)?$/;
/** A comma that separates values, not the one after a date's day name ("Sun, 06 Nov ..."). */
const VALUE_SEPARATOR = /,(?!\s*\d{1,2}[ -][A-Za-z])/;
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

/** The values of a header, trimmed, one per line and per comma-separated member; undefined when absent. */
function valuesOf(value: HeaderValue): string[] | undefined {
  if (value === null || value === undefined) return undefined;
  const lines = typeof value === 'object' ? value : [value];
  const out: string[] = [];
  for (const line of lines) {
    if (line === null || line === undefined) continue;
    for (const piece of String(line).split(VALUE_SEPARATOR)) out.push(piece.trim());
  }
  return out.length === 0 ? undefined : out;
}

function capped(ms: number): number {
  return Math.min(ms, MAX_PUSHBACK_MS);
}

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

/** A bare item of a structured field (RFC 9651), as far as rate limit fields use them. */
type Bare = string | number | boolean;
interface Member {
  readonly item: Bare;
  readonly params: Map<string, Bare>;
}

const TOKEN_START = /[A-Za-z*]/;
const TOKEN_CHAR = /[A-Za-z0-9!#$%&'*+\-.^_`|~:/]/;
const KEY_START = /[a-z*]/;
const KEY_CHAR = /[a-z0-9_\-.*]/;
const NUMBER = /^-?\d{1,15}(?:\.\d{1,3})?/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A structured field List of Items (RFC 9651 section 4.2.1), or undefined when malformed. */
function parseList(text: string): Member[] | undefined {
  let i = 0;
  const members: Member[] = [];
  const skip = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  const bare = (): Bare | undefined => {
    const c = text[i];
    if (c === '"') {
      let s = '';
      for (i++; i < text.length; i++) {
        const ch = text[i]!;
        if (ch === '"') {
          i++;
          return s;
        }
        if (ch === '\\') {
          const next = text[++i];
          if (next !== '"' && next !== '\\') return undefined;
          s += next;
        } else s += ch;
      }
      return undefined;
    }
    if (c === ':') {
      const end = text.indexOf(':', i + 1);
      if (end < 0 || !BASE64.test(text.slice(i + 1, end))) return undefined;
      const bytes = text.slice(i, end + 1);
      i = end + 1;
      return bytes;
    }
    if (c === '?') {
      const b = text[i + 1];
      if (b !== '0' && b !== '1') return undefined;
      i += 2;
      return b === '1';
    }
    if (c !== undefined && (c === '-' || (c >= '0' && c <= '9'))) {
      const m = NUMBER.exec(text.slice(i));
      if (m === null) return undefined;
      i += m[0].length;
      return Number(m[0]);
    }
    if (c !== undefined && TOKEN_START.test(c)) {
      const start = i;
      while (i < text.length && TOKEN_CHAR.test(text[i]!)) i++;
      return text.slice(start, i);
    }
    return undefined;
  };
  skip();
  while (i < text.length) {
    const item = bare();
    if (item === undefined) return undefined;
    const params = new Map<string, Bare>();
    while (text[i] === ';') {
      i++;
      skip();
      const start = i;
      if (!KEY_START.test(text[i] ?? '')) return undefined;
      while (i < text.length && KEY_CHAR.test(text[i]!)) i++;
      const key = text.slice(start, i);
      let v: Bare | undefined = true;
      if (text[i] === '=') {
        i++;
        v = bare();
        if (v === undefined) return undefined;
      }
      params.set(key, v);
    }
    members.push({ item, params });
    skip();
    if (i >= text.length) break;
    if (text[i] !== ',') return undefined;
    i++;
    skip();
    if (i >= text.length) return undefined;
  }
  return members;
}

function fieldText(value: HeaderValue): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'object') return String(value);
  const lines = value.filter((v) => v !== null && v !== undefined).map(String);
  return lines.length === 0 ? undefined : lines.join(', ');
}

function nonNegativeInteger(v: Bare | undefined): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/**
 * The wait the IETF `RateLimit` field asks for (draft-ietf-httpapi-ratelimit-headers-09, a
 * structured field list such as `"default";r=0;t=10`), in ms, or undefined.
 *
 * Only a quota policy with no quota left (`r=0`) asks to wait: `t` seconds (its reset). When
 * such a policy gives no `t`, the window `w` of the policy of that name in `policy` (the
 * `RateLimit-Policy` field, e.g. `"default";q=100;w=60`) is waited instead, the longest the
 * reset can be. Of several exhausted policies, the longest wait. A malformed field, negative or
 * fractional numbers, or no exhausted policy give undefined. At most {@link MAX_PUSHBACK_MS}.
 */
export function parseRateLimit(value: HeaderValue, policy?: HeaderValue): number | undefined {
  const text = fieldText(value);
  const members = text === undefined ? undefined : parseList(text);
  if (members === undefined) return undefined;
  let policies: Member[] | undefined;
  let best: number | undefined;
  for (const { item, params } of members) {
    if (params.get('r') !== 0) continue;
    let seconds = params.get('t');
    if (seconds === undefined) {
      if (policies === undefined) {
        const policyText = fieldText(policy);
        policies = (policyText === undefined ? undefined : parseList(policyText)) ?? [];
      }
      seconds = policies.find((p) => p.item === item)?.params.get('w');
    }
    if (!nonNegativeInteger(seconds)) continue;
    const ms = capped(seconds * 1000);
    if (best === undefined || ms > best) best = ms;
  }
  return best;
}

type Lookup = (name: string) => HeaderValue;

/** How to read header `name` from `source`, or undefined when it carries no headers. */
function lookupOf(source: unknown, depth: number): Lookup | undefined {
  if (source === null || typeof source !== 'object' || depth > 3) return undefined;
  const s = source as Record<string, unknown>;
  // Headers, AxiosHeaders, gRPC Metadata (its `get` answers an array, [] when absent).
  const get = s.get;
  if (typeof get === 'function') {
    return (name) => {
      const v: HeaderValue = get.call(s, name);
      return Array.isArray(v) && v.length === 0 ? undefined : v;
    };
  }
  // A Response, undici's errors, got's and Node's responses carry `headers`; axios, got, ky and
  // ofetch errors a `response`; gRPC errors `metadata`; wrapping errors a `cause`.
  for (const key of ['headers', 'response', 'metadata', 'cause']) {
    if (key in s) {
      const found = lookupOf(s[key], depth + 1);
      if (found !== undefined) return found;
    }
  }
  const proto = Object.getPrototypeOf(s);
  if (proto !== Object.prototype && proto !== null) return undefined;
  // A plain object of headers: names in any case.
  const byName = new Map<string, HeaderValue>();
  for (const key of Object.keys(s)) byName.set(key.toLowerCase(), s[key] as HeaderValue);
  return (name) => byName.get(name);
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
 * 3. `RateLimit` with `RateLimit-Policy` ({@link parseRateLimit});
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
