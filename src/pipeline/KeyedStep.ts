import { UsageError } from '../errors/OptionsError.js';
import { brand } from '../protocol/brand.js';
import { RESULT_TYPE, type ResultTypeOf } from '../protocol/result.js';
import { MAX_KEY_LENGTH } from '../validation/validate.js';
import { KeyedPipeline } from './KeyedPipeline.js';
import { COMPOSE_KEYED } from './keyedMark.js';

/**
 * A step of a pipeline that stands for one instance per key (a breaker per downstream host, a
 * rate limiter per tenant), the instance found anew for each call. A registry makes it
 * (`registry.keyed('circuitBreaker', 'api')`); `pipeline(...)` given one returns a
 * `KeyedPipeline`, whose calls give their key (`execute(fn, { key })`) or have it computed by
 * the step's key function.
 *
 * @typeParam P the instances it stands for
 */
export class KeyedStep<P extends object = object> {
  /** @internal The result type the instances judge, for `pipeline(...)`. */
  declare readonly [RESULT_TYPE]?: ResultTypeOf<P>;
  /** The kind of the instances (`circuitBreaker`). */
  readonly kind: string;
  /** The registry name the instances are kept under. */
  readonly name: string;
  /** The kind in words, for messages. */
  private readonly label: string;
  private readonly lookup: (key: string) => P;
  private readonly keyOf: ((key: string | undefined) => unknown) | undefined;

  /**
   * Made by a registry: `lookup` answers the current instance of a key (made on
   * demand, never one the registry has dropped) and throws `OptionsError` for a key that is not
   * a string of at most 1,024 characters; `keyOf` computes the key from the call's.
   */
  constructor(
    kind: string,
    label: string,
    name: string,
    lookup: (key: string) => P,
    keyOf: ((key: string | undefined) => unknown) | undefined,
  ) {
    this.kind = kind;
    this.label = label;
    this.name = name;
    this.lookup = lookup;
    this.keyOf = keyOf;
  }

  /** @internal `pipeline(...policies)`, where `policies` hold this step. */
  [COMPOSE_KEYED](policies: readonly unknown[]): KeyedPipeline {
    return new KeyedPipeline(policies as ConstructorParameters<typeof KeyedPipeline>[0]);
  }

  /**
   * @internal The instance for a call given `key` (undefined when the call gave none). Throws
   * {@link UsageError} when there is no key to use: the call gave none and the step has no key
   * function, or the key function answered something other than a key.
   */
  resolve(key: string | undefined): P {
    const keyOf = this.keyOf;
    if (keyOf === undefined) {
      if (key === undefined) {
        throw new UsageError(
          `The pipeline has a keyed ${this.label} ("${this.name}"): give each call its key, \`execute(fn, { key })\`, or give the step a key function, \`registry.keyed(kind, name, { key })\``,
        );
      }
      return this.lookup(key);
    }
    const own = keyOf(key);
    if (typeof own !== 'string' || own.length > MAX_KEY_LENGTH) {
      const got = typeof own === 'string' ? `a string of ${own.length} characters` : typeof own;
      throw new UsageError(
        `The \`key\` function of the keyed ${this.label} "${this.name}" must return a string of at most ${MAX_KEY_LENGTH} characters, got ${got}`,
      );
    }
    return this.lookup(own);
  }
}

brand(KeyedStep, 'KeyedStep');
