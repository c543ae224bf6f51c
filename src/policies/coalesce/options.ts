import type { Clock } from '../../clock/Clock.js';
import { boolean, checkOptionsObject, fn } from '../../validation/validate.js';
import { NAMED_KEYS, type ResolvedNamed, resolveNamed } from '../shared/commonOptions.js';

/**
 * Options of {@link Coalescer}. `T` is the result type of the calls it shares, which `share`
 * sees.
 */
export interface CoalesceOptions<T = unknown> {
  /**
   * Calls share flights. When false, every call runs the steps inside on its own, as if it
   * had no key (a switch config data can turn). @default true
   */
  readonly enabled?: boolean;
  /**
   * Makes the value each caller gets of a shared success, called once per caller: without it
   * every caller gets the very same value object. A value that can be consumed once (a fetch
   * `Response`, whose body reads once; a stream) must be copied here, `(r) => r.clone()`, or
   * flattened by the shared function (return `await r.json()` rather than `r`). A throw fails
   * that caller alone, with the error. @default every caller gets the value as it is
   */
  readonly share?: (value: T) => T;
  /** Name used in the registry, metrics and events. @default "coalesce" */
  readonly name?: string;
  /**
   * The clock of the pipelines it is in when no other policy gives one (a call's own `timeout`
   * runs on it); a coalescer itself reads no time. @default the system clock
   */
  readonly clock?: Clock;
}

/** Defaults of {@link CoalesceOptions}. */
export const coalesceDefaults = Object.freeze({ enabled: true, name: 'coalesce' });

/** The options after defaults and checks, as the policy keeps them; not exported by name. */
export interface ResolvedCoalesceOptions<T = unknown> extends ResolvedNamed {
  enabled: boolean;
  share: ((value: T) => T) | undefined;
}

/** @internal Validates `options` and fills in defaults; throws `OptionsError` naming the field. */
export function resolveCoalesceOptions<T>(
  options: CoalesceOptions<T> | undefined,
): ResolvedCoalesceOptions<T> {
  const o = checkOptionsObject(options, ['enabled', 'share', ...NAMED_KEYS], '');
  return {
    enabled: boolean(o.enabled, 'enabled', coalesceDefaults.enabled),
    share: fn(o.share, 'share', undefined) as ((value: T) => T) | undefined,
    ...resolveNamed(o, coalesceDefaults.name),
  };
}
