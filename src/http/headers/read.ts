import {
  type Bare,
  capped,
  type HeaderValue,
  type Lookup,
  lookupOf,
  nonNegativeInteger,
  parseDictionary,
  parseList,
  serviceLimit,
} from './fields.js';
import { parseRateLimitReset } from './parse.js';

/**
 * Which shape the rate limit headers that were read had:
 *
 * - `'structured'`: `RateLimit` and `RateLimit-Policy` as structured field lists of named
 *   policies (drafts -08 to -12: `"default";r=50;t=30`, `"default";q=100;w=60`);
 * - `'draft-7'`: `RateLimit: limit=100, remaining=50, reset=30`, and `RateLimit-Policy: 100;w=60`;
 * - `'draft-6'`: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, and
 *   `RateLimit-Policy: 100;w=60`;
 * - `'legacy'`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`.
 */
export type RateLimitShape = 'structured' | 'draft-7' | 'draft-6' | 'legacy';

/** What a server says of one quota policy; a field the headers do not give is absent. */
export interface RateLimitPolicyState {
  /** The policy's name; absent in the shapes that name none (draft-7, draft-6, legacy). */
  readonly policy?: string;
  /** Quota units per window (`q`, `limit`). */
  readonly limit?: number;
  /** The window in ms (`w`, in whole seconds on the wire). */
  readonly windowMs?: number;
  /** Quota units left (`r`, `remaining`). */
  readonly remaining?: number;
  /** Ms until more quota (`t`, `reset`), at most `MAX_PUSHBACK_MS`. */
  readonly resetMs?: number;
}

/** The rate limit state a response's headers report (see {@link readRateLimit}). */
export interface RateLimitState {
  /** The shape the headers were read from. */
  readonly shape: RateLimitShape;
  /** One entry per policy: the structured fields may name several, the other shapes give one. */
  readonly policies: readonly RateLimitPolicyState[];
}

type Mutable = { -readonly [K in keyof RateLimitPolicyState]: RateLimitPolicyState[K] };

/** Whole seconds (> 0 when `positive`) in ms, or undefined. */
function seconds(v: Bare | undefined, positive = false): number | undefined {
  return nonNegativeInteger(v) && (!positive || v > 0) ? v * 1000 : undefined;
}

/** The first item of a field when it is a non-negative integer (its parameters ignored), else undefined. */
function count(value: HeaderValue): number | undefined {
  const item = parseList(value)?.[0]?.item;
  return nonNegativeInteger(item) ? item : undefined;
}

/** Drops the absent fields, so that a state compares equal to one written by hand. */
function defined(state: Mutable): RateLimitPolicyState | undefined {
  let empty = true;
  for (const key of Object.keys(state) as (keyof Mutable)[]) {
    if (state[key] === undefined) delete state[key];
    else if (key !== 'policy') empty = false;
  }
  return empty ? undefined : state;
}

function structured(get: Lookup): RateLimitPolicyState[] | undefined {
  const byName = new Map<string, Mutable>();
  const entry = (name: string) => {
    let state = byName.get(name);
    if (state === undefined) byName.set(name, (state = { policy: name }));
    return state;
  };
  for (const { item, params } of parseList(get('ratelimit')) ?? []) {
    if (typeof item !== 'string') continue;
    const state = entry(item);
    const [r, window] = serviceLimit(params);
    if (nonNegativeInteger(r)) state.remaining = r;
    const t = seconds(window);
    if (t !== undefined) state.resetMs = capped(t);
  }
  for (const { item, params } of parseList(get('ratelimit-policy')) ?? []) {
    if (typeof item !== 'string') continue;
    const state = entry(item);
    const q = params.get('q');
    if (nonNegativeInteger(q)) state.limit = q;
    state.windowMs = seconds(params.get('w'), true);
  }
  const policies: RateLimitPolicyState[] = [];
  for (const state of byName.values()) {
    const found = defined(state);
    if (found !== undefined) policies.push(found);
  }
  return policies.length === 0 ? undefined : policies;
}

/** The window of the draft-6/draft-7 `RateLimit-Policy` item whose quota is `limit` (`100;w=60`). */
function windowOf(get: Lookup, limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  const policy = parseList(get('ratelimit-policy'))?.find((m) => m.item === limit);
  return seconds(policy?.params.get('w'), true);
}

function draft7(get: Lookup): RateLimitPolicyState | undefined {
  const fields = parseDictionary(get('ratelimit'));
  if (fields === undefined) return undefined;
  const limit = fields.get('limit');
  const remaining = fields.get('remaining');
  const reset = seconds(fields.get('reset'));
  return defined({
    limit: nonNegativeInteger(limit) ? limit : undefined,
    windowMs: windowOf(get, nonNegativeInteger(limit) ? limit : undefined),
    remaining: nonNegativeInteger(remaining) ? remaining : undefined,
    resetMs: reset === undefined ? undefined : capped(reset),
  });
}

/** The split fields of draft-6 (`prefix` 'ratelimit-') or the legacy ones ('x-ratelimit-'). */
function split(get: Lookup, prefix: string, now: number): RateLimitPolicyState | undefined {
  const limit = count(get(`${prefix}limit`));
  return defined({
    limit,
    windowMs: prefix === 'ratelimit-' ? windowOf(get, limit) : undefined,
    remaining: count(get(`${prefix}remaining`)),
    resetMs: parseRateLimitReset(get(`${prefix}reset`), now),
  });
}

/**
 * The rate limit state a response, a headers object or an error reports, from the first of
 * these shapes it carries (see {@link RateLimitShape}): the structured `RateLimit` /
 * `RateLimit-Policy` fields of drafts -08 to -12, the draft-07 `RateLimit` field, the draft-06
 * `RateLimit-Limit` / `-Remaining` / `-Reset` fields, or `X-RateLimit-*`. Undefined when it
 * carries none, or none that parses.
 *
 * `source` is read as {@link readPushback} reads it (a `Response`, `Headers`, a plain object
 * of headers, or an error carrying one). Numbers must be non-negative integers (fields that
 * are not are left out); windows and resets are in ms. The resets of `RateLimit-Reset` and
 * `X-RateLimit-Reset` are read as {@link parseRateLimitReset} reads them (seconds from now, or
 * an epoch time, measured from `now`). In draft-6 and draft-7 the window is that of the
 * `RateLimit-Policy` item whose quota is the limit. Deciding how long to wait is
 * {@link readPushback}'s job, not this.
 *
 * `now` (ms since the epoch) is what epoch resets are measured from. @default Date.now()
 */
export function readRateLimit(
  source: unknown,
  now: number = Date.now(),
): RateLimitState | undefined {
  const get = lookupOf(source);
  if (get === undefined) return undefined;
  const policies = structured(get);
  if (policies !== undefined) return { shape: 'structured', policies };
  const seven = draft7(get);
  if (seven !== undefined) return { shape: 'draft-7', policies: [seven] };
  const six = split(get, 'ratelimit-', now);
  if (six !== undefined) return { shape: 'draft-6', policies: [six] };
  const legacy = split(get, 'x-ratelimit-', now);
  if (legacy !== undefined) return { shape: 'legacy', policies: [legacy] };
  return undefined;
}
