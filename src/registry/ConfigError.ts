import { BreakwaterError, nameErrorClass } from '../errors/BreakwaterError.js';
import { coreCodes } from '../errors/codes.js';

/** One problem found in registry config data. */
export interface ConfigIssue {
  /** Dotted path of the offending key, e.g. `circuitBreakers.payments.failureRateThreshold`. */
  readonly path: string;
  /** What is wrong, without the path, e.g. `expected a number in (0, 1], got 1.5`. */
  readonly message: string;
}

/**
 * Thrown when registry config data is invalid. It lists every problem found, each with its
 * path, rather than stopping at the first; its message has one line per issue:
 * `circuitBreakers.payments.failureRateThreshold: expected a number in (0, 1], got 1.5`.
 */
export class ConfigError extends BreakwaterError {
  static override readonly codes: readonly string[] = [coreCodes.InvalidConfig];
  /** Every problem found: misspelt keys and malformed values first, then values out of range. */
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    const lines = issues.map((i) => `\n  ${i.path}: ${i.message}`).join('');
    super(
      coreCodes.InvalidConfig,
      `Invalid registry config (${issues.length} ${issues.length === 1 ? 'issue' : 'issues'}):${lines}`,
    );
    this.issues = Object.freeze(issues.map((i) => Object.freeze({ ...i })));
  }
}

nameErrorClass(ConfigError, 'ConfigError');
