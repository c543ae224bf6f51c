import { MAX_DURATION_MS } from '../../validation/validate.js';

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

export function capped(ms: number): number {
  return Math.min(ms, MAX_PUSHBACK_MS);
}

/** A comma that separates values, not the one after a date's day name ("Sun, 06 Nov ..."). */
const VALUE_SEPARATOR = /,(?!\s*\d{1,2}[ -][A-Za-z])/;

/** The values of a header, trimmed, one per line and per comma-separated member; undefined when absent. */
export function valuesOf(value: HeaderValue): string[] | undefined {
  if (value === null || value === undefined) return undefined;
  const lines = typeof value === 'object' ? value : [value];
  const out: string[] = [];
  for (const line of lines) {
    if (line === null || line === undefined) continue;
    for (const piece of String(line).split(VALUE_SEPARATOR)) out.push(piece.trim());
  }
  return out.length === 0 ? undefined : out;
}

/** A header's lines joined by ", " (how RFC 9651 combines a structured field's lines). */
export function fieldText(value: HeaderValue): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'object') return String(value);
  const lines = value.filter((v) => v !== null && v !== undefined).map(String);
  return lines.length === 0 ? undefined : lines.join(', ');
}

/** A bare item of a structured field (RFC 9651), as far as rate limit fields use them. */
export type Bare = string | number | boolean;
export interface Member {
  /** The member's key, in a Dictionary; undefined in a List. */
  readonly key?: string;
  readonly item: Bare;
  readonly params: Map<string, Bare>;
}

const TOKEN_START = /[A-Za-z*]/;
const TOKEN_CHAR = /[A-Za-z0-9!#$%&'*+\-.^_`|~:/]/;
const KEY_START = /[a-z*]/;
const KEY_CHAR = /[a-z0-9_\-.*]/;
const NUMBER = /^-?\d{1,15}(?:\.\d{1,3})?/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The members of a structured field List (RFC 9651 section 4.2.1) or, with `keyed`, of a
 * Dictionary (section 4.2.2: `key=item` or a bare `key`, meaning true), each with its
 * parameters; undefined when malformed. Inner lists are not read (no rate limit field has one).
 */
function parseMembers(text: string, keyed: boolean): Member[] | undefined {
  let i = 0;
  const members: Member[] = [];
  const skip = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  const key = (): string | undefined => {
    const start = i;
    if (!KEY_START.test(text[i] ?? '')) return undefined;
    while (i < text.length && KEY_CHAR.test(text[i]!)) i++;
    return text.slice(start, i);
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
    let name: string | undefined;
    let item: Bare | undefined = true;
    if (keyed) {
      name = key();
      if (name === undefined) return undefined;
      if (text[i] === '=') {
        i++;
        item = bare();
      }
    } else item = bare();
    if (item === undefined) return undefined;
    const params = new Map<string, Bare>();
    while (text[i] === ';') {
      i++;
      skip();
      const k = key();
      if (k === undefined) return undefined;
      let v: Bare | undefined = true;
      if (text[i] === '=') {
        i++;
        v = bare();
        if (v === undefined) return undefined;
      }
      params.set(k, v);
    }
    members.push(name === undefined ? { item, params } : { key: name, item, params });
    skip();
    if (i >= text.length) break;
    if (text[i] !== ',') return undefined;
    i++;
    skip();
    if (i >= text.length) return undefined;
  }
  return members;
}

/** A structured field List of Items (RFC 9651 section 4.2.1), or undefined when absent or malformed. */
export function parseList(value: HeaderValue): Member[] | undefined {
  const text = fieldText(value);
  return text === undefined ? undefined : parseMembers(text, false);
}

/**
 * A structured field Dictionary (RFC 9651 section 4.2.2) as a map of key to item (the last of
 * a repeated key), or undefined when absent or malformed.
 */
export function parseDictionary(value: HeaderValue): Map<string, Bare> | undefined {
  const text = fieldText(value);
  const members = text === undefined ? undefined : parseMembers(text, true);
  if (members === undefined) return undefined;
  const out = new Map<string, Bare>();
  for (const m of members) out.set(m.key!, m.item);
  return out;
}

export function nonNegativeInteger(v: Bare | undefined): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/**
 * The available quota and the effective window (in seconds) of a `RateLimit` service limit
 * item: its `r` and `t` (drafts -08 to -11) or, when it has neither, its `a` and `w`, the names
 * a pending revision of the draft gives them (ietf-wg-httpapi/ratelimit-headers#166).
 */
export function serviceLimit(params: Map<string, Bare>): [Bare | undefined, Bare | undefined] {
  return params.has('r') || params.has('t')
    ? [params.get('r'), params.get('t')]
    : [params.get('a'), params.get('w')];
}

/** Reads the header of a name (lower case) from a source of headers. */
export type Lookup = (name: string) => HeaderValue;

/** How to read header `name` from `source`, or undefined when it carries no headers. */
export function lookupOf(source: unknown, depth = 0): Lookup | undefined {
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
