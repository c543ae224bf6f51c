import type { Clock } from '../clock/Clock.js';
import { describeValue } from '../errors/describeValue.js';
import { OptionsError } from '../errors/OptionsError.js';
import type { AnyPolicyKind, KeyedKind, OptionsData } from '../protocol/kind.js';
import { ConfigError, type ConfigIssue } from './ConfigError.js';
import type { ValidConfig } from './config/types.js';
import type { RegistryInstances } from './instances.js';
import type { KeyedInstances } from './KeyedInstances.js';

/**
 * @internal Checks config `next` against every instance of a registry built from config (not
 * the registered ones) and every keyed group, and answers the function that applies it to them
 * all, or throws {@link ConfigError} listing every problem, `found` (those of the data) and
 * those of the instances, having changed nothing (see `Registry.reconfigure`). An instance
 * whose data has a problem is not checked further. `options` gives the options data of an
 * instance under `next`.
 */
export function prepareReconfigure(
  all: RegistryInstances,
  next: ValidConfig,
  options: (kind: AnyPolicyKind, name: string) => OptionsData,
  clock: Clock,
  found: readonly ConfigIssue[] = [],
): () => void {
  const issues: ConfigIssue[] = [...found];
  const steps: (() => void)[] = [];
  const hasIssue = (kind: AnyPolicyKind, name: string): boolean =>
    found.some(({ path }) =>
      [`${kind.section}.${name}`, `defaults.${kind.name}`].some(
        (at) => path === at || path.startsWith(`${at}.`) || path.startsWith(`${at}[`),
      ),
    );
  const check = (kind: AnyPolicyKind, name: string, prepare: () => () => void): void => {
    if (hasIssue(kind, name)) return;
    try {
      steps.push(prepare());
    } catch (error) {
      if (error instanceof ConfigError) issues.push(...error.issues);
      else if (error instanceof OptionsError) {
        issues.push({
          path: `${kind.section}.${name}.${error.option}`,
          message: `expected ${error.expected}, got ${describeValue(error.value)}`,
        });
      } else throw error;
    }
  };

  for (const { kind, named } of all) {
    for (const [name, { policy, registered }] of named) {
      if (registered) continue;
      check(kind, name, () => kind.reconfigure(policy, kind.resolve(options(kind, name))));
    }
  }
  for (const { kind, keyed } of all) {
    for (const [name, { group, instances }] of keyed) {
      check(kind, name, () => {
        const o = kind.resolve(options(kind, name));
        const { keep, drop } = sortKeyed(instances, group, clock, (i) => group.check(i, o));
        return () => {
          for (const key of drop) instances.delete(key);
          group.apply(o, keep);
        };
      });
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);

  return () => {
    for (const step of steps) step();
    const { maxKeys, idleTimeout, hardMaxKeys } = next.keys;
    for (const { keyed } of all) {
      for (const { instances } of keyed.values()) {
        instances.setLimits(maxKeys, idleTimeout, hardMaxKeys);
      }
    }
  };
}

/**
 * Splits the live keyed instances into those that take new options (`check` passes) and
 * those to drop (it fails, but they are not protected). A protected one that cannot take
 * them makes the whole change fail: the error is thrown on.
 */
function sortKeyed<T>(
  instances: KeyedInstances<T>,
  kind: KeyedKind<T>,
  clock: Clock,
  check: (instance: T) => void,
): { keep: T[]; drop: string[] } {
  const keep: T[] = [];
  const drop: string[] = [];
  instances.forEachLive((key, instance) => {
    try {
      check(instance);
      keep.push(instance);
    } catch (error) {
      if (
        !(error instanceof OptionsError) ||
        kind.isProtected(instance, clock.now(), Number.POSITIVE_INFINITY)
      )
        throw error;
      drop.push(key);
    }
  });
  return { keep, drop };
}
