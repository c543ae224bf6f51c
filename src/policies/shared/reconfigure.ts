import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';

/**
 * @internal The options given to `reconfigure`, with the policy's current `name` and `clock`
 * filled in where they are left out. The caller's object is copied, never changed; anything
 * that is not a plain options object is passed on as it is, for the resolver to reject.
 */
export function withIdentity<T>(options: T, name: string, clock: Clock): T {
  if (options === undefined) return { name, clock } as T;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return options;
  // A spread defines own data properties: a `__proto__` key in the input stays a plain key
  // (which the resolver then rejects as unknown) and never changes the copy's prototype.
  const copy: Record<string, unknown> = { ...(options as Record<string, unknown>) };
  if (copy.name === undefined) copy.name = name;
  if (copy.clock === undefined) copy.clock = clock;
  return copy as T;
}

/** @internal Throws {@link OptionsError} when `reconfigure` would change a name or a clock. */
export function checkIdentity(
  kind: string,
  name: string,
  clock: Clock,
  nextName: string,
  nextClock: Clock,
): void {
  if (nextName !== name) {
    throw new OptionsError(
      'name',
      nextName,
      `${JSON.stringify(name)} (a ${kind}'s name cannot change; build a new one)`,
    );
  }
  if (nextClock !== clock) {
    throw new OptionsError(
      'clock',
      nextClock,
      `the clock the ${kind} was built with (its clock cannot change; build a new one)`,
    );
  }
}

/** @internal A policy whose options are checked as a whole, then swapped in. */
export interface Reconfigurable<R> {
  readonly name: string;
  readonly clock: Clock;
  checkOptions(o: R): void;
  applyOptions(o: R): void;
}

/**
 * @internal `policy.reconfigure(options)`: resolves `options` with the policy's name and
 * clock where they are left out, checks them, then applies them (nothing changes on a throw).
 */
export function reconfigureWith<O, R>(
  policy: Reconfigurable<R>,
  resolve: (options: O) => R,
  options: O,
): void {
  const o = resolve(withIdentity(options, policy.name, policy.clock));
  policy.checkOptions(o);
  policy.applyOptions(o);
}
