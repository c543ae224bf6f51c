import { describeValue } from '../errors/describeValue.js';
import type { Duration } from '../protocol/kind.js';
import { DURATION_FORMS, durationToMs } from '../validation/duration.js';
import { MAX_DURATION_MS } from '../validation/validate.js';
import { ConfigError } from './ConfigError.js';

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
        message: `expected ${DURATION_FORMS}, in [0, ${MAX_DURATION_MS}] ms, got ${describeValue(value)}`,
      },
    ]);
  }
  return ms;
}
