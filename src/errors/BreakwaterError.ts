import type { ErrorCode } from './codes.js';

/**
 * The brand every breakwater error carries. `Symbol.for` makes it the same symbol in every
 * copy of the package loaded into one realm, so the type guards and `instanceof` keep working
 * when an application ends up with two copies (a CJS and an ESM one, or two versions).
 */
export const BRAND: unique symbol = Symbol.for('breakwater.error') as never;

type Branded = { [BRAND]?: unknown; code?: unknown };

/**
 * Base class of every error breakwater throws. Each has a stable `code`.
 * `instanceof` is answered from the brand, not the prototype chain, so it holds across
 * duplicate copies of the package.
 */
export class BreakwaterError extends Error {
  /** Codes accepted by `instanceof` for this class; subclasses narrow it. */
  static readonly codes: readonly string[] = [];
  declare readonly [BRAND]: true;
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /**
   * `instanceof` by brand and code, so an error made by another copy of the library (its
   * CommonJS or ESM build) is recognised too.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== 'object' || value === null || (value as Branded)[BRAND] !== true) {
      return false;
    }
    // The base class itself accepts every branded error.
    if (this === BreakwaterError) return true;
    // A subclass made outside the library names no codes of its own: the prototype chain says.
    if (!Object.hasOwn(this, 'codes'))
      return Function.prototype[Symbol.hasInstance].call(this, value);
    return this.codes.includes((value as Branded).code as string);
  }
}

nameErrorClass(BreakwaterError, 'BreakwaterError');

/**
 * @internal Names a class of errors on its prototype: `error.name` without an own property on
 * each error, and the same after a minifier renames the class.
 */
export function nameErrorClass(errorClass: { readonly prototype: Error }, name: string): void {
  Object.defineProperty(errorClass.prototype, 'name', { value: name, writable: true });
}

/**
 * Builds an error without capturing a stack trace. Capturing a stack costs microseconds and
 * rejections must be cheap, so each policy keeps one of these and rejects with it.
 */
export function stackless<E extends Error>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    const error = make();
    // Engines without stackTraceLimit still get a short, constant stack string.
    error.stack = `${error.name}: ${error.message}`;
    return error;
  } finally {
    Error.stackTraceLimit = limit;
  }
}
