import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { DurationString } from '../../protocol/kind.js';
import {
  checkOptionsObject,
  duration,
  MAX_DURATION_MS,
  oneOf,
  STRING_FORM,
} from '../../validation/validate.js';
import { DEBUGGED_KEYS, type ResolvedDebugged, resolveDebugged } from '../shared/commonOptions.js';

/**
 * - `cooperative`: at the deadline the signal handed to the function is aborted and the
 *   pipeline waits for the function to settle; if it then rejects, the call fails with
 *   {@link TimeoutError}; if it returns a value anyway, that value is kept. A function that
 *   never read its signal cannot hear the deadline: its call fails at the deadline as with
 *   `aggressive` (the work goes on in the background, observed).
 * - `aggressive`: at the deadline the call fails with {@link TimeoutError} at once and the
 *   signal is aborted; the abandoned work finishes in the background and its late rejection is
 *   observed (never unhandled). Policies inside the timeout keep their permits until it does.
 */
export type TimeoutStrategy = 'cooperative' | 'aggressive';

/** Options of {@link Timeout}. */
export interface TimeoutOptions {
  /**
   * The time limit: ms as a number in [1, 2147483647], or a string like `"2s"` (see
   * {@link DurationString}). Required. There is no "no limit" value: for no time limit, leave
   * the timeout out of the pipeline. On a clock that is costly to read
   * (the system clock) a deadline starts at the next tick of the policy's shared timer, every
   * `timeout / 32` ms (at least 1 ms): never early, at most one tick late.
   */
  readonly timeout: number | DurationString;
  /** @default "cooperative" */
  readonly strategy?: TimeoutStrategy;
  /** Name used in errors and events. @default "timeout" */
  readonly name?: string;
  /** @default the system clock */
  readonly clock?: Clock;
  /** Fresh errors with stack traces instead of one preallocated error. @default false */
  readonly debug?: boolean;
}

/** Defaults of {@link TimeoutOptions}. */
export const timeoutDefaults = Object.freeze({
  strategy: 'cooperative' as TimeoutStrategy,
  name: 'timeout',
});

/** The options after defaults and checks, as the policy keeps them; not exported by name. */
export interface ResolvedTimeoutOptions extends ResolvedDebugged {
  timeout: number;
  strategy: TimeoutStrategy;
}

/** @internal */
export function resolveTimeoutOptions(
  options: number | DurationString | TimeoutOptions,
): ResolvedTimeoutOptions {
  const shortcut = typeof options === 'number' || typeof options === 'string';
  if (
    !shortcut &&
    options !== undefined &&
    (typeof options !== 'object' || options === null || Array.isArray(options))
  ) {
    // `timeout(true)` is a mistaken timeout, not a mistaken options object.
    throw new OptionsError(
      'timeout',
      options,
      `a number of ms in [1, ${MAX_DURATION_MS}] or a string like "2s" (or an options object holding \`timeout\`)`,
    );
  }
  const o = shortcut
    ? { timeout: options }
    : checkOptionsObject(options, ['timeout', 'strategy', ...DEBUGGED_KEYS], '');
  if (o.timeout === undefined) {
    throw new OptionsError(
      'timeout',
      undefined,
      `a number of ms in [1, ${MAX_DURATION_MS}]${STRING_FORM}`,
    );
  }
  if (o.timeout === Number.POSITIVE_INFINITY || o.timeout === 'Infinity') {
    // A timeout without a deadline would only cost: say what to do instead.
    throw new OptionsError(
      'timeout',
      o.timeout,
      `a number of ms in [1, ${MAX_DURATION_MS}]${STRING_FORM}; for no time limit, leave the timeout out of the pipeline`,
    );
  }
  const timeout = duration(o.timeout, 'timeout', 0, 1);
  return {
    timeout,
    strategy: oneOf(o.strategy, 'strategy', timeoutDefaults.strategy, [
      'cooperative',
      'aggressive',
    ]),
    ...resolveDebugged(o, timeoutDefaults.name),
  };
}
