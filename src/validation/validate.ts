import { OptionsError } from '../errors/OptionsError.js';
import { DURATION_FORMS, parseDurationString, unitHint } from './duration.js';

/** The longest duration `setTimeout` honours (2^31 - 1 ms); longer ones would fire at once. */
export const MAX_DURATION_MS = 2_147_483_647;

/**
 * The longest key (in UTF-16 code units) a keyed instance, keyed limiter or Redis limiter
 * accepts. Keys usually come from traffic (hosts, tenants, client addresses); a cap keeps one
 * hostile key from making every snapshot, `/metrics` page and Redis decision as large as it is.
 */
export const MAX_KEY_LENGTH = 1024;

/** The error for a key that is not a string of at most {@link MAX_KEY_LENGTH} characters, or undefined. */
export function keyError(key: unknown, path = 'key'): OptionsError | undefined {
  if (typeof key === 'string' && key.length <= MAX_KEY_LENGTH) return undefined;
  return new OptionsError(path, key, `a string of at most ${MAX_KEY_LENGTH} characters`);
}

/**
 * Checks that an options argument is a plain object (or undefined) and holds only known keys.
 * Unknown keys are an error rather than silently ignored: a typo like `breakDurtion` would
 * otherwise leave the default in force without anyone noticing.
 */
export function checkOptionsObject(
  value: unknown,
  known: readonly string[],
  path: string,
): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsError(path || 'options', value, 'an options object');
  }
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      const suggestion = closest(key, known);
      throw new OptionsError(
        join(path, key),
        (value as Record<string, unknown>)[key],
        `not set: it is not a known option${suggestion ? ` (did you mean \`${suggestion}\`?)` : ''}; known options are ${known.map((k) => `\`${k}\``).join(', ')}`,
      );
    }
  }
  return value as Record<string, unknown>;
}

export function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** @internal What every duration message adds: the string form, besides ms as a number. */
export const STRING_FORM = ' (or a string like "30s")';

/**
 * A duration option in ms: a number, or a string of digits and a unit (`"250ms"`, `"30s"`,
 * `"1.5s"`, `"5m"`, `"1h"`; `"Infinity"` where `allowInfinity`), within [min, max] or
 * `Infinity` where `allowInfinity`. Throws {@link OptionsError} naming `path`, the value and
 * the valid forms.
 */
export function duration(
  value: unknown,
  path: string,
  fallback: number,
  min = 0,
  allowInfinity = false,
  max = MAX_DURATION_MS,
): number {
  if (value === undefined) return fallback;
  const ms =
    typeof value === 'string' ? durationString(value, path, allowInfinity, min, max) : value;
  if (typeof ms === 'number' && !Number.isNaN(ms)) {
    if (ms === Number.POSITIVE_INFINITY && allowInfinity) return ms;
    if (Number.isFinite(ms) && ms >= min && ms <= max) return ms;
  }
  throw new OptionsError(
    path,
    value,
    `a number of ms in [${min}, ${max}]${allowInfinity ? ' or Infinity' : ''}${STRING_FORM}`,
  );
}

/** A duration in ms greater than 0 and at most 2^31-1, or `Infinity` (what is off then); as {@link duration}. */
export function positiveDuration(
  value: unknown,
  path: string,
  fallback = Number.POSITIVE_INFINITY,
): number {
  if (value === undefined) return fallback;
  const ms =
    typeof value === 'string' ? durationString(value, path, true, 0, MAX_DURATION_MS, '(') : value;
  if (
    typeof ms === 'number' &&
    (ms === Number.POSITIVE_INFINITY || (ms > 0 && ms <= MAX_DURATION_MS))
  ) {
    return ms;
  }
  throw new OptionsError(
    path,
    value,
    `a number of ms in (0, ${MAX_DURATION_MS}] or Infinity (off)${STRING_FORM}`,
  );
}

/** The ms of a duration string; a malformed one throws, naming the forms and the range. */
function durationString(
  value: string,
  path: string,
  allowInfinity: boolean,
  min: number,
  max: number,
  open = '[',
): number {
  // "Infinity" is read everywhere, so that where it is not allowed the message says why.
  const ms = parseDurationString(value, true);
  if (ms !== undefined) return ms;
  throw new OptionsError(
    path,
    value,
    `${DURATION_FORMS}${allowInfinity ? ', or "Infinity"' : ''}, in ${open}${min}, ${max}] ms${unitHint(value)}`,
  );
}

/** An integer within [min, max] (`max` may be Infinity, in which case Infinity is allowed). */
export function integer(
  value: unknown,
  path: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number') {
    if (value === Number.POSITIVE_INFINITY && max === Number.POSITIVE_INFINITY) return value;
    if (Number.isInteger(value) && value >= min && value <= max) return value;
  }
  throw new OptionsError(path, value, `an integer in [${min}, ${max}]`);
}

/** A number in (min, max] when `openMin`, else [min, max]. */
export function numberIn(
  value: unknown,
  path: string,
  fallback: number,
  min: number,
  max: number,
  openMin = false,
): number {
  if (value === undefined) return fallback;
  if (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (openMin ? value > min : value >= min) &&
    value <= max
  ) {
    return value;
  }
  throw new OptionsError(path, value, `a number in ${openMin ? '(' : '['}${min}, ${max}]`);
}

export function boolean(value: unknown, path: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  throw new OptionsError(path, value, 'a boolean');
}

export function string(value: unknown, path: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && value.length > 0) return value;
  throw new OptionsError(path, value, 'a non-empty string');
}

export function oneOf<T extends string>(
  value: unknown,
  path: string,
  fallback: T,
  allowed: readonly T[],
): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value))
    return value as T;
  throw new OptionsError(path, value, `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
}

export function fn<F extends (...args: never[]) => unknown>(
  value: unknown,
  path: string,
  fallback: F,
): F;
export function fn<F extends (...args: never[]) => unknown>(
  value: unknown,
  path: string,
  fallback: undefined,
): F | undefined;
export function fn<F extends (...args: never[]) => unknown>(
  value: unknown,
  path: string,
  fallback: F | undefined,
): F | undefined {
  if (value === undefined) return fallback;
  if (typeof value === 'function') return value as F;
  throw new OptionsError(path, value, 'a function');
}

/** Accepts anything with the members a {@link Clock} needs. */
export function clockOption<C>(value: unknown, path: string, fallback: C): C {
  if (value === undefined) return fallback;
  if (hasMethods(value, ['now', 'setTimer', 'clearTimer'])) return value as C;
  throw new OptionsError(path, value, 'a Clock (an object with now, setTimer and clearTimer)');
}

/**
 * @internal True when `value` is an object with a function under each of `names`, read in
 * that order: the duck check of the clocks, clients and registries taken from callers.
 */
export function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  for (const name of names) if (typeof v[name] !== 'function') return false;
  return true;
}

/** The known key closest to `key` by edit distance, when it is close enough to be a typo. */
export function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  // Keys from data can be long; past this the answer is "not a typo" anyway.
  if (Math.abs(a.length - b.length) > 8 || a.length > 64) return Number.POSITIVE_INFINITY;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Throws {@link OptionsError} when a function called from plain JavaScript got a defined
 * argument past the `taken` it takes: `timeout(2000, 'aggressive')` would otherwise build a
 * cooperative timeout without a word. `args` is the function's `arguments`.
 */
export function onlyArguments(args: ArrayLike<unknown>, taken: number, callee: string): void {
  for (let i = taken; i < args.length; i++) {
    if (args[i] === undefined) continue;
    const what = taken === 1 ? 'one argument' : `${taken} arguments`;
    throw new OptionsError(
      `${callee} argument ${i + 1}`,
      args[i],
      `absent: ${callee} takes ${what}; put every setting in the options object`,
    );
  }
}
