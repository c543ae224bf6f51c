import type { CircuitState } from '../policies/circuit-breaker/state.js';
import type { Registry } from '../registry/Registry.js';
import type { RegistryInstanceSnapshot } from '../registry/snapshot.js';
import { limitKeys, type OmittedKeys } from './limitKeys.js';

const MAX_LISTED = 100;

/** A critical breaker that stops traffic. */
export interface UnavailableBreaker {
  readonly name: string;
  readonly key?: string;
  readonly state: CircuitState;
}

/** The JSON body of `GET /health`. */
export interface HealthReport {
  /**
   * `ok` when every breaker lets calls through; `degraded` when one is open, half-open or
   * forced open (the answer is 503 only when a critical one is open or forced open).
   */
  readonly status: 'ok' | 'degraded';
  /** Critical breakers open or forced open now (keyed ones with their key; at most 100). */
  readonly unavailable: readonly UnavailableBreaker[];
  /** Every instance of the registry, at most `maxKeysPerName` keys of each keyed name. */
  readonly instances: readonly RegistryInstanceSnapshot[];
  /** Keys left out of `instances`, counted per kind and name. */
  readonly omitted: readonly OmittedKeys[];
  /** When the report was made (ISO 8601). */
  readonly time: string;
}

/** @internal The report and its HTTP status: 503 while a critical breaker stops traffic. */
export function healthReport(
  registry: Registry,
  critical: ReadonlySet<string>,
  maxKeysPerName: number,
): { readonly status: 200 | 503; readonly body: HealthReport } {
  const all = registry.snapshot().instances;
  let degraded = false;
  let failing = 0;
  const unavailable: UnavailableBreaker[] = [];
  for (const instance of all) {
    if (instance.kind !== 'circuitBreaker') continue;
    const { state } = instance;
    if (state !== 'open' && state !== 'forced-open' && state !== 'half-open') continue;
    degraded = true;
    if (state !== 'half-open' && critical.has(instance.name)) {
      failing++;
      if (unavailable.length < MAX_LISTED)
        unavailable.push(
          instance.key === undefined
            ? { name: instance.name, state }
            : { name: instance.name, key: instance.key, state },
        );
    }
  }
  const { instances, omitted } = limitKeys(all, maxKeysPerName);
  return {
    status: failing > 0 ? 503 : 200,
    body: {
      status: degraded ? 'degraded' : 'ok',
      unavailable,
      instances,
      omitted,
      time: new Date().toISOString(),
    },
  };
}
