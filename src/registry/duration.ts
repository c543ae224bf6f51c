import { describeValue } from '../errors/describeValue.js';
import type { Duration } from '../protocol/kind.js';
import { MAX_DURATION_MS } from '../validation/validate.js';
import { ConfigError } from './ConfigError.js';

const UNIT_MS = new Map([
  ['ms', 1],
  ['s', 1_000],
  ['m', 60_000],
  ['h', 3_600_000],
]);

// Bounded repetitions keep matching linear, and the numbers exactly representable.
const PATTERN = /^(\d{1,15}(?:\.\d{1,9})?)(ms|s|m|h)$/;

const EXPECTED = 'a duration: ms as a number, or a string like "250ms", "30s", "1.5s", "5m", "1h"';

/**
 * @internal Converts a config duration to ms. Numbers pass through unchanged (their range is
 * checked where they are used); a string is parsed, or the reason it is not a duration is
 * returned as `{ error }`. `"Infinity"` is read only where `allowInfinity`.
 */
export function durationToMs(value: unknown, allowInfinity: boolean): number | { error: string } {
  if (typeof value !== 'string') return value as number;
  if (allowInfinity && value === 'Infinity') return Number.POSITIVE_INFINITY;
  const match = PATTERN.exec(value);
  if (match === null) {
    const hint = /^\d+(\.\d+)?$/.test(value) ? ' (a string needs a unit)' : '';
    return {
      error: `expected ${EXPECTED}${allowInfinity ? ' or "Infinity"' : ''}, got ${describeValue(value)}${hint}`,
    };
  }
  // Rounded to the microsecond: 1.1 × 1000 is 1100.0000000000002 in binary floating point.
  return Math.round(Number(match[1]) * UNIT_MS.get(match[2]!)! * 1000) / 1000;
}

/**
 * Parses a {@link Duration} into milliseconds in [0, 2147483647] (the longest a timer can
 * wait). Throws {@link ConfigError} naming `path` when the value is not one.
 *
 * @example
 * ```ts
 * parseDuration('1.5s'); // 1500
 * parseDuration(250);    // 250
 * parseDuration('30 s'); // throws ConfigError: "duration: expected a duration ..."
 * ```
 */
export function parseDuration(value: Duration, path = 'duration'): number {
  const ms = durationToMs(value, false);
  if (typeof ms === 'object') throw new ConfigError([{ path, message: ms.error }]);
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_DURATION_MS) {
    throw new ConfigError([
      {
        path,
        message: `expected ${EXPECTED}, in [0, ${MAX_DURATION_MS}] ms, got ${describeValue(value)}`,
      },
    ]);
  }
  return ms;
}
