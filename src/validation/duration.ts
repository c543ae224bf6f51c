import { describeValue } from '../errors/describeValue.js';

const UNIT_MS = new Map([
  ['ms', 1],
  ['s', 1_000],
  ['m', 60_000],
  ['h', 3_600_000],
]);

// Bounded repetitions keep matching linear, and the numbers exactly representable.
const PATTERN = /^(\d{1,15}(?:\.\d{1,9})?)(ms|s|m|h)$/;

/** @internal The forms a duration may take, for messages. */
export const DURATION_FORMS =
  'a duration: ms as a number, or a string like "250ms", "30s", "1.5s", "5m", "1h"';

/**
 * @internal The ms a duration string stands for: digits (a fraction allowed) and a unit, `ms`,
 * `s`, `m` or `h`, or `"Infinity"` where `allowInfinity`; undefined for any other string (no
 * spaces, signs, exponents, compound forms or bare digits, so a typo cannot pass).
 */
export function parseDurationString(value: string, allowInfinity: boolean): number | undefined {
  if (value === 'Infinity') return allowInfinity ? Number.POSITIVE_INFINITY : undefined;
  const match = PATTERN.exec(value);
  if (match === null) return undefined;
  // Rounded to the microsecond: 1.1 × 1000 is 1100.0000000000002 in binary floating point.
  return Math.round(Number(match[1]) * UNIT_MS.get(match[2]!)! * 1000) / 1000;
}

/** @internal A note for a string of bare digits, which is refused for want of a unit. */
export function unitHint(value: string): string {
  return /^\d+(\.\d+)?$/.test(value) ? ' (a string needs a unit)' : '';
}

/**
 * @internal Converts a config duration to ms. Numbers pass through unchanged (their range is
 * checked where they are used); a string is parsed, or the reason it is not a duration is
 * returned as `{ error }`. `"Infinity"` is read only where `allowInfinity`.
 */
export function durationToMs(value: unknown, allowInfinity: boolean): number | { error: string } {
  if (typeof value !== 'string') return value as number;
  const ms = parseDurationString(value, allowInfinity);
  if (ms !== undefined) return ms;
  return {
    error: `expected ${DURATION_FORMS}${allowInfinity ? ' or "Infinity"' : ''}, got ${describeValue(value)}${unitHint(value)}`,
  };
}
