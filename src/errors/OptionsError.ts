import { BreakwaterError, nameErrorClass } from './BreakwaterError.js';
import { coreCodes } from './codes.js';
import { describeValue } from './describeValue.js';

/**
 * Thrown when a policy is constructed with an invalid option. It names the option, the value
 * it got and what was expected, e.g.
 * `Expected \`breakDuration\` to be a number of ms in [1, 2147483647], got -5`.
 */
export class OptionsError extends BreakwaterError {
  static override readonly codes: readonly string[] = [coreCodes.InvalidOption];
  /** Dotted path of the offending option, e.g. `halfOpen.maxWait`. */
  readonly option: string;
  /** The value that was rejected. */
  readonly value: unknown;
  /** A description of the valid values. */
  readonly expected: string;

  constructor(option: string, value: unknown, expected: string) {
    super(
      coreCodes.InvalidOption,
      `Expected \`${option}\` to be ${expected}, got ${describeValue(value)}`,
    );
    this.option = option;
    this.value = value;
    this.expected = expected;
  }
}

nameErrorClass(OptionsError, 'OptionsError');

/**
 * Thrown when an API is used in a way it cannot serve, for example `executeSync` on a
 * pipeline holding a policy that has to wait.
 */
export class UsageError extends BreakwaterError {
  static override readonly codes: readonly string[] = [coreCodes.Usage];
  constructor(message: string) {
    super(coreCodes.Usage, message);
  }
}

nameErrorClass(UsageError, 'UsageError');
