import type { Clock } from '../clock/Clock.js';
import { describeValue } from '../errors/describeValue.js';
import { OptionsError } from '../errors/OptionsError.js';
import { resolveBulkheadOptions } from '../policies/bulkhead/options.js';
import { sameWindowShape } from '../policies/circuit-breaker/makeWindow.js';
import { resolveBreakerOptions } from '../policies/circuit-breaker/options.js';
import { resolveRateLimiterOptions } from '../policies/rate-limiter/options.js';
import { resolveRetryOptions } from '../policies/retry/options.js';
import { resolveTimeoutOptions } from '../policies/timeout/options.js';
import { ConfigError, type ConfigIssue } from './ConfigError.js';
import { SECTION_OF } from './config/schema.js';
import type { OptionsData, RegistryKind, ValidConfig } from './config/types.js';
import type { KeyedInstances, KeyedKind } from './KeyedInstances.js';
import type { RegistryInstances } from './Registry.js';

/**
 * @internal Checks config `next` against every instance of a registry built from config (not
 * the registered ones) and every keyed group, and answers the function that applies it to them
 * all, or throws {@link ConfigError} listing every problem, having changed nothing (see
 * `Registry.reconfigure`). `options` gives the options data of an instance under `next`.
 */
export function prepareReconfigure(
  all: RegistryInstances,
  next: ValidConfig,
  options: (kind: RegistryKind, name: string) => OptionsData,
  clock: Clock,
): () => void {
  const issues: ConfigIssue[] = [];
  const steps: (() => void)[] = [];
  const check = (kind: RegistryKind, name: string, prepare: () => () => void): void => {
    try {
      steps.push(prepare());
    } catch (error) {
      if (error instanceof ConfigError) issues.push(...error.issues);
      else if (error instanceof OptionsError) {
        issues.push({
          path: `${SECTION_OF.get(kind)}.${name}.${error.option}`,
          message: `expected ${error.expected}, got ${describeValue(error.value)}`,
        });
      } else throw error;
    }
  };

  for (const [name, { policy, registered }] of all.breakers) {
    if (registered) continue;
    check('circuitBreaker', name, () => {
      const o = resolveBreakerOptions(options('circuitBreaker', name));
      policy.checkOptions(o);
      return () => policy.applyOptions(o);
    });
  }
  for (const [name, { policy, registered }] of all.retries) {
    if (registered) continue;
    check('retry', name, () => {
      const o = resolveRetryOptions(options('retry', name));
      policy.checkOptions(o);
      return () => policy.applyOptions(o);
    });
  }
  for (const [name, { policy, registered }] of all.timeouts) {
    if (registered) continue;
    check('timeout', name, () => {
      const o = resolveTimeoutOptions(options('timeout', name) as never);
      policy.checkOptions(o);
      return () => policy.applyOptions(o);
    });
  }
  for (const [name, { policy, registered }] of all.bulkheads) {
    if (registered) continue;
    check('bulkhead', name, () => {
      const o = resolveBulkheadOptions(options('bulkhead', name));
      policy.checkOptions(o);
      return () => policy.applyOptions(o);
    });
  }
  for (const [name, { policy, registered }] of all.rateLimiters) {
    if (registered) continue;
    check('rateLimiter', name, () => {
      const o = resolveRateLimiterOptions(options('rateLimiter', name));
      policy.checkOptions(o);
      return () => policy.applyOptions(o);
    });
  }
  for (const [name, { kind, instances }] of all.keyedBreakers) {
    check('circuitBreaker', name, () => {
      const o = resolveBreakerOptions(options('circuitBreaker', name));
      const { keep, drop } = sortKeyed(instances, kind, clock, (b) => b.checkOptions(o, b.name));
      return () => {
        const old = kind.o;
        kind.o = o;
        for (const key of drop) instances.delete(key);
        for (const b of keep) b.applyOptions(o);
        if (!sameWindowShape(o, old)) {
          // A window of another shape starts empty, shelved ones included.
          instances.forEach((_key, b, store, at) => {
            if (b === undefined) store[at] = 0;
          });
        }
      };
    });
  }
  for (const [name, { kind, instances }] of all.keyedBulkheads) {
    check('bulkhead', name, () => {
      const o = resolveBulkheadOptions(options('bulkhead', name));
      const { keep, drop } = sortKeyed(instances, kind, clock, (b) => b.checkOptions(o, b.name));
      return () => {
        kind.o = o;
        for (const key of drop) instances.delete(key);
        for (const b of keep) b.applyOptions(o);
      };
    });
  }
  for (const [name, { kind, instances }] of all.keyedRateLimiters) {
    check('rateLimiter', name, () => {
      const o = resolveRateLimiterOptions(options('rateLimiter', name));
      const { keep, drop } = sortKeyed(instances, kind, clock, (l) => l.checkOptions(o, l.name));
      return () => {
        kind.o = o;
        for (const key of drop) instances.delete(key);
        for (const l of keep) l.applyOptions(o);
      };
    });
  }
  if (issues.length > 0) throw new ConfigError(issues);

  return () => {
    for (const step of steps) step();
    const { maxKeys, idleTimeout } = next.keys;
    for (const { instances } of all.keyedBreakers.values())
      instances.setLimits(maxKeys, idleTimeout);
    for (const { instances } of all.keyedBulkheads.values())
      instances.setLimits(maxKeys, idleTimeout);
    for (const { instances } of all.keyedRateLimiters.values())
      instances.setLimits(maxKeys, idleTimeout);
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
