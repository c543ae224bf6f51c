/**
 * @internal How `pipeline()` and the policy checks tell a keyed step without importing its
 * class: a program that never makes one (a browser bundle of a few policies) then carries
 * none of the keyed pipeline's code.
 */
export const COMPOSE_KEYED: unique symbol = Symbol('breakwater.composeKeyed') as never;

/** @internal A keyed step as the pipeline module sees it. */
export interface KeyedStepMark {
  readonly kind: string;
  readonly name: string;
  /** Builds the keyed pipeline of `policies`, which hold this step. */
  [COMPOSE_KEYED](policies: readonly unknown[]): unknown;
}

/** @internal True for a keyed step (`registry.keyed(kind, name)`). */
export function isKeyedStep(p: unknown): p is KeyedStepMark {
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof (p as Partial<KeyedStepMark>)[COMPOSE_KEYED] === 'function'
  );
}
