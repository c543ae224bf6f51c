import { OptionsError, UsageError } from '../errors/OptionsError.js';
import type { Policy } from '../pipeline/Pipeline.js';
import { otherCopyNote } from '../protocol/brand.js';
import type { AnyPolicyKind, PolicyKindOf } from '../protocol/kind.js';
import { Registry } from '../registry/Registry.js';
import { checkOptionsObject } from '../validation/validate.js';
import { makeDecorator, type SpecSource } from './decorate.js';
import type { Spec } from './plan.js';
import type { KindDecorator, PolicyDecorator, SignalArgument } from './types.js';

/**
 * @internal What the decorator of a policy no registry holds needs of it, for a policy that
 * has no kind descriptor: a string given to its decorator is then options, never a name.
 */
export interface UnregisteredKind {
  readonly unregistered: true;
  /** `@name(...)` in messages. */
  readonly name: string;
  is(value: unknown): boolean;
  create(options: unknown): object;
}

/**
 * The decorator of any policy kind, made from its descriptor (as the library's own decorators
 * are). The decorator it returns takes:
 * - options: a new instance (`kind.create(options)`) for this method, shared by every object
 *   of the class (one per object with `{ perInstance: true }`); bad options throw where the
 *   decorator is written;
 * - a registry name: `registry.get(kind, name)` at the first call, in the default registry
 *   unless `{ registry }` (which must have been given the kind: `new Registry(config,
 *   { kinds: [kind] })`); with `{ key: (...args) => string }`, one instance per key,
 *   `registry.getKeyed(kind, name, key)` on each call, for a kind kept per key;
 * - an instance of the kind (`kind.is(value)`), used as it is.
 *
 * Messages name it `@` + the kind's `decoratorName`, or its `name`. Its instances must be
 * pipeline steps (see the `Gate` protocol).
 *
 * @typeParam P the kind's instances
 * @typeParam O the options its `create` takes (unchecked by types unless given)
 *
 * @example
 * ```ts
 * import { Registry } from 'breakwater';
 * import { kindDecorator } from 'breakwater/decorators';
 * import { concurrencyCapKind, type ConcurrencyCap, type CapOptions } from './concurrencyCap.js';
 *
 * const concurrencyCap = kindDecorator<ConcurrencyCap, CapOptions>(concurrencyCapKind);
 * const registry = new Registry(
 *   { defaults: { concurrencyCap: { limit: 10 } } },
 *   { kinds: [concurrencyCapKind] },
 * );
 *
 * class Reports {
 *   @concurrencyCap({ limit: 4 })            // a new cap, shared by every Reports
 *   async daily(day: string) { ... }
 *
 *   @concurrencyCap('per-tenant', { registry, key: (tenant: string) => tenant })
 *   async monthly(tenant: string) { ... }    // one cap per tenant
 * }
 * ```
 */
export function kindDecorator<P extends object, O = unknown>(
  kind: PolicyKindOf<P>,
): KindDecorator<P, O> {
  if (
    typeof kind !== 'object' ||
    kind === null ||
    typeof kind.name !== 'string' ||
    kind.name.length === 0 ||
    typeof kind.is !== 'function' ||
    typeof kind.create !== 'function'
  ) {
    throw new OptionsError(
      'kind',
      kind,
      'a policy kind descriptor (an object with a non-empty `name`, `is` and `create`)',
    );
  }
  return ((arg?: unknown, options?: unknown) =>
    policyDecorator(kind, arg, options)) as KindDecorator<P, O>;
}

/** @internal The decorator `@kind(arg, options)`: see {@link kindDecorator}. */
export function policyDecorator<R>(
  kind: AnyPolicyKind | UnregisteredKind,
  arg: unknown,
  options: unknown,
): PolicyDecorator<R> {
  const registered = 'unregistered' in kind ? undefined : kind;
  const label = registered?.decoratorName ?? kind.name;
  const named = typeof arg === 'string' && registered !== undefined;
  const instance = !named && kind.is(arg);
  if (
    (named || instance) &&
    typeof options === 'object' &&
    options !== null &&
    'perInstance' in options
  ) {
    throw new UsageError(
      `@${label}(...): \`perInstance\` applies to policy options only; a ${named ? 'registry name' : 'policy object'} stands for one shared instance`,
    );
  }
  let source: SpecSource;
  if (named) {
    source = namedSource(label, arg, options, registered);
  } else if (instance) {
    const o = checkOptionsObject(options, ['signal'], '');
    const spec: Spec = { form: 'fixed', policies: [arg as Policy] };
    source = { label, spec: () => spec, signal: signalOption(o.signal) };
  } else {
    const o = checkOptionsObject(options, ['perInstance', 'signal'], '');
    const perInstance = booleanOption(o.perInstance, 'perInstance');
    const create = () => kind.create(arg) as Policy;
    // Built now so bad options fail where the decorator is written, not at the first call.
    let spare: Policy | undefined = create();
    const spec = perInstance
      ? (): Spec => ({ form: 'per-instance', create })
      : (): Spec => {
          // Each decorated method gets its own policy, even from one decorator value.
          const policy = spare ?? create();
          spare = undefined;
          return { form: 'fixed', policies: [policy] };
        };
    source = { label, spec, signal: signalOption(o.signal) };
  }
  return makeDecorator(source) as PolicyDecorator<R>;
}

function namedSource(
  label: string,
  name: string,
  options: unknown,
  kind: AnyPolicyKind,
): SpecSource {
  if (name.length === 0) throw new OptionsError('name', name, 'a registry name (non-empty)');
  const keyed = kind.keyed !== undefined;
  const o = checkOptionsObject(
    options,
    keyed ? ['registry', 'key', 'signal'] : ['registry', 'signal'],
    '',
  );
  const registry = o.registry;
  if (registry !== undefined && !(registry instanceof Registry)) {
    throw new OptionsError('registry', registry, `a Registry${otherCopyNote(registry)}`);
  }
  const key = o.key;
  if (key !== undefined && typeof key !== 'function') {
    throw new OptionsError('key', key, 'a function of the arguments returning a string');
  }
  const spec: Spec = {
    form: 'named',
    kind,
    name,
    registry,
    key: key as ((...args: unknown[]) => unknown) | undefined,
  };
  return { label, spec: () => spec, signal: signalOption(o.signal) };
}

function booleanOption(value: unknown, path: string): boolean {
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  throw new OptionsError(path, value, 'a boolean');
}

/** @internal Checks a decorator's `signal` option. */
export function signalOption(value: unknown): SignalArgument | undefined {
  if (value === undefined || value === 'last' || value === false) return value;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  throw new OptionsError('signal', value, "'last', false or an argument index (an integer >= 0)");
}
