import { OptionsError } from '../../errors/OptionsError.js';

/**
 * Which shape of rate limit headers to send (draft-ietf-httpapi-ratelimit-headers):
 *
 * - `'draft-6'`: `RateLimit-Policy: 100;w=60`, `RateLimit-Limit`, `RateLimit-Remaining`,
 *   `RateLimit-Reset` (draft -06 and earlier);
 * - `'draft-7'`: `RateLimit-Policy: 100;w=60` and `RateLimit: limit=100, remaining=50, reset=30`;
 * - `'draft-8'`: structured fields, `RateLimit-Policy: "name";q=100;w=60` and
 *   `RateLimit: "name";r=50;t=30` (drafts -08 to -10);
 * - `'draft-12'`: the same syntax, that of draft -11, where `t` became the effective window;
 * - `'latest'`: the newest draft supported, today `'draft-12'`;
 * - `'legacy'`: `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`, the reset
 *   in seconds from now (not an epoch time).
 */
export type RateLimitHeaderVersion =
  | 'draft-6'
  | 'draft-7'
  | 'draft-8'
  | 'draft-12'
  | 'latest'
  | 'legacy';

/** One quota's state, as {@link rateLimitHeaders} sends it. */
export interface RateLimitQuota {
  /** The quota policy's name (draft-8 and later send it quoted); see {@link policyName}. Printable ASCII. */
  readonly policy: string;
  /** Permits per window (`q`, `limit`); a fraction is rounded down. */
  readonly limit: number;
  /** The window in ms (`w`), > 0, sent in whole seconds rounded up. */
  readonly windowMs: number;
  /** Whole permits left now (`r`, `remaining`), >= 0; a fraction is rounded down. */
  readonly remaining: number;
  /** Ms until more quota (`t`, `reset`), >= 0, sent in whole seconds rounded up. */
  readonly resetMs: number;
  /** The partition key (`pk`, draft-8 and later), sent as an RFC 9651 byte sequence of its UTF-8 bytes; left out when undefined. */
  readonly partitionKey?: string;
}

/** The largest integer an RFC 9651 structured field can carry. */
const MAX_SF_INTEGER = 999_999_999_999_999;

function whole(value: unknown, field: string): number {
  if (typeof value === 'number' && value >= 0 && value <= MAX_SF_INTEGER) return Math.floor(value);
  throw new OptionsError(field, value, `a number in [0, ${MAX_SF_INTEGER}]`);
}

function seconds(ms: unknown, field: string, min: number): number {
  if (typeof ms === 'number' && ms >= min && ms <= MAX_SF_INTEGER * 1000)
    return Math.ceil(ms / 1000);
  throw new OptionsError(
    field,
    ms,
    `a number of ms ${min === 0 ? 'in [0' : 'in (0'}, ${MAX_SF_INTEGER * 1000}]`,
  );
}

let lastPolicy: string | undefined;
let lastQuoted = '';

/**
 * `policy` as an RFC 9651 String (`"name"`, `"` and `\` escaped). The middleware sends the
 * same few names on every response, so the last one is kept rather than checked again.
 */
function quoted(policy: unknown): string {
  if (policy === lastPolicy) return lastQuoted;
  if (typeof policy !== 'string') throw policyError(policy);
  let out = '"';
  for (let i = 0; i < policy.length; i++) {
    const c = policy.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) throw policyError(policy);
    out += c === 0x22 || c === 0x5c ? `\\${policy[i]}` : policy[i];
  }
  lastQuoted = `${out}"`;
  lastPolicy = policy;
  return lastQuoted;
}

function policyError(policy: unknown): OptionsError {
  return new OptionsError('quota.policy', policy, 'a string of printable ASCII characters');
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
let encoder: { encode(text: string): Uint8Array } | undefined;

/** `;pk=:…:`, the partition key's UTF-8 bytes as an RFC 9651 byte sequence; '' when undefined. */
function partitionParam(key: unknown): string {
  if (key === undefined) return '';
  if (typeof key !== 'string') {
    throw new OptionsError('quota.partitionKey', key, 'a string or undefined');
  }
  encoder ??= new TextEncoder();
  const bytes = encoder.encode(key);
  let out = ';pk=:';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += BASE64[n >> 18] + BASE64[(n >> 12) & 63] + BASE64[(n >> 6) & 63] + BASE64[n & 63];
  }
  if (i + 1 === bytes.length) {
    const n = bytes[i] << 16;
    out += `${BASE64[n >> 18]}${BASE64[(n >> 12) & 63]}==`;
  } else if (i + 2 === bytes.length) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += `${BASE64[n >> 18]}${BASE64[(n >> 12) & 63]}${BASE64[(n >> 6) & 63]}=`;
  }
  return `${out}:`;
}

/**
 * The rate limit headers for `quota` in the shape of `version`, in order, as [name, value]
 * pairs with lower-case names:
 *
 * | version | headers |
 * | --- | --- |
 * | `'draft-6'` | `ratelimit-policy: 100;w=60`, `ratelimit-limit: 100`, `ratelimit-remaining: 50`, `ratelimit-reset: 30` |
 * | `'draft-7'` | `ratelimit-policy: 100;w=60`, `ratelimit: limit=100, remaining=50, reset=30` |
 * | `'draft-8'`, `'draft-12'`, `'latest'` | `ratelimit-policy: "name";q=100;w=60`, `ratelimit: "name";r=50;t=30` (each with `;pk=:…:` when `partitionKey` is given) |
 * | `'legacy'` | `x-ratelimit-limit: 100`, `x-ratelimit-remaining: 50`, `x-ratelimit-reset: 30` (seconds from now) |
 *
 * Throws {@link OptionsError} naming the field (`quota.limit`, …) for a negative, NaN or
 * infinite number, a window of 0, a policy name that is not printable ASCII, or an unknown
 * `version`.
 */
export function rateLimitHeaders(
  version: RateLimitHeaderVersion,
  quota: RateLimitQuota,
): Array<[string, string]> {
  const limit = whole(quota.limit, 'quota.limit');
  const remaining = whole(quota.remaining, 'quota.remaining');
  const window = seconds(quota.windowMs, 'quota.windowMs', Number.MIN_VALUE);
  const reset = seconds(quota.resetMs, 'quota.resetMs', 0);
  switch (version) {
    case 'draft-6':
      return [
        ['ratelimit-policy', `${limit};w=${window}`],
        ['ratelimit-limit', `${limit}`],
        ['ratelimit-remaining', `${remaining}`],
        ['ratelimit-reset', `${reset}`],
      ];
    case 'draft-7':
      return [
        ['ratelimit-policy', `${limit};w=${window}`],
        ['ratelimit', `limit=${limit}, remaining=${remaining}, reset=${reset}`],
      ];
    case 'draft-8':
    case 'draft-12':
    case 'latest': {
      const name = quoted(quota.policy);
      const pk = partitionParam(quota.partitionKey);
      return [
        ['ratelimit-policy', `${name};q=${limit};w=${window}${pk}`],
        ['ratelimit', `${name};r=${remaining};t=${reset}${pk}`],
      ];
    }
    case 'legacy':
      return [
        ['x-ratelimit-limit', `${limit}`],
        ['x-ratelimit-remaining', `${remaining}`],
        ['x-ratelimit-reset', `${reset}`],
      ];
    default:
      throw new OptionsError(
        'version',
        version,
        "one of 'draft-6', 'draft-7', 'draft-8', 'draft-12', 'latest', 'legacy'",
      );
  }
}

/**
 * A `Retry-After` value in delta-seconds: `ms` rounded up to whole seconds (0 stays 0), so a
 * client that waits it never comes back early. Throws {@link OptionsError} for a negative, NaN
 * or infinite `ms`.
 */
export function retryAfterValue(ms: number): string {
  return `${seconds(ms, 'retryAfterMs', 0)}`;
}

const UNITS: ReadonlyArray<readonly [number, string]> = [
  [86_400_000, 'day'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1_000, 's'],
];

/**
 * A policy name like express-rate-limit's, `${limit}-in-${window}`: the window in the largest
 * unit that divides it (`day`/`days`, `h`, `min`, `s`, else `ms`): `'100-in-1min'`,
 * `'5-in-30s'`, `'1000-in-1day'`, `'10-in-1500ms'`. Throws {@link OptionsError} for a negative
 * or non-finite `limit` or a `windowMs` that is not a finite number > 0.
 */
export function policyName(limit: number, windowMs: number): string {
  const permits = whole(limit, 'limit');
  if (!(typeof windowMs === 'number' && windowMs > 0 && Number.isFinite(windowMs))) {
    throw new OptionsError('windowMs', windowMs, 'a finite number of ms > 0');
  }
  for (const [ms, unit] of UNITS) {
    if (windowMs % ms === 0) {
      const n = windowMs / ms;
      return `${permits}-in-${n}${unit}${unit === 'day' && n > 1 ? 's' : ''}`;
    }
  }
  return `${permits}-in-${windowMs}ms`;
}

/** The media type of an RFC 9457 problem details body. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The problem types draft-ietf-httpapi-ratelimit-headers registers (section 5). */
const PROBLEM_TYPES = new Set([
  'quota-exceeded',
  'temporary-reduced-capacity',
  'abnormal-usage-detected',
]);

/** Where the IANA "HTTP Problem Types" registry puts the draft's problem types. */
const PROBLEM_TYPE_BASE = 'https://iana.org/assignments/http-problem-types#';

/**
 * An RFC 9457 problem details object. `type` is one of the rate limit draft's problem types
 * (`'quota-exceeded'` for 429, `'temporary-reduced-capacity'` for 503,
 * `'abnormal-usage-detected'` for 429), which becomes its registered URI, or any other URI,
 * taken as it is.
 */
export interface ProblemInit {
  /** The HTTP status, an integer in [100, 599]. */
  readonly status: number;
  /** A short problem type of the draft, or a URI. */
  readonly type: string;
  /** A short summary of the problem type. */
  readonly title: string;
  /** An explanation specific to this occurrence. Left out when undefined. */
  readonly detail?: string;
  /** The names of the quota policies exceeded (`violated-policies`). Left out when undefined. */
  readonly violatedPolicies?: readonly string[];
  /** A URI for this occurrence. Left out when undefined. */
  readonly instance?: string;
}

/**
 * The JSON text of an RFC 9457 problem details body (send it with
 * `Content-Type: application/problem+json`, {@link PROBLEM_CONTENT_TYPE}): members `type`,
 * `title`, `status`, then `detail`, `instance` and `violated-policies` when given. Throws
 * {@link OptionsError} for a status outside [100, 599], a missing type or title, or a member of
 * the wrong type.
 */
export function problemBody(init: ProblemInit): string {
  const { status, type, title, detail, instance, violatedPolicies } = init;
  if (!(Number.isInteger(status) && status >= 100 && status <= 599)) {
    throw new OptionsError('status', status, 'an integer in [100, 599]');
  }
  if (typeof type !== 'string' || type === '') {
    throw new OptionsError('type', type, 'a problem type of the draft or a URI');
  }
  if (typeof title !== 'string') throw new OptionsError('title', title, 'a string');
  optionalString(detail, 'detail');
  optionalString(instance, 'instance');
  if (
    violatedPolicies !== undefined &&
    !(Array.isArray(violatedPolicies) && violatedPolicies.every((p) => typeof p === 'string'))
  ) {
    throw new OptionsError('violatedPolicies', violatedPolicies, 'an array of strings');
  }
  const body: Record<string, unknown> = {
    type: PROBLEM_TYPES.has(type) ? PROBLEM_TYPE_BASE + type : type,
    title,
    status,
  };
  if (detail !== undefined) body.detail = detail;
  if (instance !== undefined) body.instance = instance;
  if (violatedPolicies !== undefined) body['violated-policies'] = violatedPolicies;
  return JSON.stringify(body);
}

function optionalString(value: unknown, field: string): void {
  if (value !== undefined && typeof value !== 'string') {
    throw new OptionsError(field, value, 'a string or undefined');
  }
}
