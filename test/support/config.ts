/** Helpers of the registry's config tests: the issues a config is rejected with, resolved options. */
import { CircuitBreaker, ConfigError, Registry, type RegistryConfig } from '../../src/index.js';
import { controllerOf } from '../../src/policies/circuit-breaker/CircuitBreaker.js';
import { errorOf } from './errors.js';

/** The issues of the ConfigError `fn` throws (fails the test when it throws none). */
export function thrownIssues(fn: () => void): ConfigError['issues'] {
  return errorOf(ConfigError, fn).issues;
}

/** The issues a registry built from `config` is rejected with (fails the test when accepted). */
export function issuesOf(config: unknown): ConfigError['issues'] {
  return thrownIssues(() => new Registry(config as RegistryConfig));
}

/** The issues a registry built from `config` is rejected with; none when it is accepted. */
export function issuesOrNone(config: unknown): ConfigError['issues'] {
  try {
    new Registry(config as RegistryConfig);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

/** The resolved options a policy runs with (internal, read to check how config is merged). */
export function resolved(policy: object): Record<string, unknown> {
  // A breaker keeps its options in its controller, out of reach of its own members.
  if (policy instanceof CircuitBreaker) {
    return controllerOf(policy).options as unknown as Record<string, unknown>;
  }
  return (policy as unknown as { o: Record<string, unknown> }).o;
}
