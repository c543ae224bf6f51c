import type { CircuitState } from '../policies/circuit-breaker/state.js';
import { limitedSnapshot, type OmittedKeys } from '../registry/listing.js';
import type { Registry } from '../registry/Registry.js';
import type { RegistryInstanceSnapshot } from '../registry/snapshot.js';

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

/**
 * @internal The report and its HTTP status: 503 while a critical breaker stops traffic. Every
 * breaker's state is read, but only the instances listed are snapshotted.
 */
export function healthReport(
  registry: Registry,
  critical: ReadonlySet<string>,
  maxKeysPerName: number,
): { readonly status: 200 | 503; readonly body: HealthReport } {
  let degraded = false;
  let failing = 0;
  const unavailable: UnavailableBreaker[] = [];
  const { instances, omitted } = limitedSnapshot(
    registry.instancesForMetrics(),
    maxKeysPerName,
    (name, key, state) => {
      // Disabled and metrics-only breakers let every call through.
      if (state !== 'open' && state !== 'forced-open' && state !== 'half-open') return;
      degraded = true;
      // A half-open breaker is probing: no reason to take the service out of rotation.
      if (state === 'half-open' || !critical.has(name)) return;
      failing++;
      if (unavailable.length < MAX_LISTED) {
        unavailable.push(key === undefined ? { name, state } : { name, key, state });
      }
    },
  );
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
