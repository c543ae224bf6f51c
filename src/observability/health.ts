import type { RegistryInstanceSnapshot } from '../policies/kinds.js';
import { limitedSnapshot, type OmittedKeys } from '../registry/listing.js';
import type { Registry } from '../registry/Registry.js';

const MAX_LISTED = 100;

/**
 * @internal What `/health`, `/metrics` and the dashboard say when the registry lists nothing:
 * how to make policies show.
 */
export const NO_POLICIES_HINT =
  "No policies to show yet: give a policy built in code a name, as in circuitBreaker({ name: 'payments' }), or build it from the registry given to createObservabilityHandler (a Registry of your own lists named code-built policies with { codeBuilt: true })";

/** A critical instance that stops traffic (a circuit breaker open or forced open). */
export interface UnavailableInstance {
  readonly name: string;
  readonly key?: string;
  /** Its state (`open`, `forced-open` for a breaker). */
  readonly state: string;
}

/** The entries of {@link HealthReport.unavailable}, named when only breakers could be critical. */
export type UnavailableBreaker = UnavailableInstance;

/** The JSON body of `GET /health`. */
export interface HealthReport {
  /**
   * `ok` when every instance lets calls through; `degraded` when one does not, by its kind: a
   * breaker open, half-open or forced open (the answer is 503 only when a critical instance is
   * down: a breaker open or forced open).
   */
  readonly status: 'ok' | 'degraded';
  /** Critical instances down now (keyed ones with their key; at most 100). */
  readonly unavailable: readonly UnavailableInstance[];
  /** Every instance of the registry, at most `maxKeysPerName` keys of each keyed name. */
  readonly instances: readonly RegistryInstanceSnapshot[];
  /** Keys left out of `instances`, counted per kind and name. */
  readonly omitted: readonly OmittedKeys[];
  /** When the report was made (ISO 8601). */
  readonly time: string;
  /** Present when there is no instance to report: how to make policies show. */
  readonly note?: string;
}

/**
 * @internal The report and its HTTP status: 503 while a critical instance is down. The state
 * of every instance of a kind with states is read, but only the instances listed are
 * snapshotted.
 */
export function healthReport(
  registry: Registry,
  critical: ReadonlySet<string>,
  maxKeysPerName: number,
): { readonly status: 200 | 503; readonly body: HealthReport } {
  let degraded = false;
  let failing = 0;
  const unavailable: UnavailableInstance[] = [];
  const { instances, omitted } = limitedSnapshot(
    registry.instancesForMetrics(),
    maxKeysPerName,
    (kind, name, key, state) => {
      // States that let every call through (a disabled breaker) are ok.
      const health = kind.health?.(state) ?? 'ok';
      if (health === 'ok') return;
      degraded = true;
      // A degraded instance (a half-open breaker probing) is no reason to take the service
      // out of rotation.
      if (health !== 'down' || !critical.has(name)) return;
      failing++;
      if (unavailable.length < MAX_LISTED) {
        unavailable.push(key === undefined ? { name, state } : { name, key, state });
      }
    },
  );
  const body: HealthReport = {
    status: degraded ? 'degraded' : 'ok',
    unavailable,
    instances,
    omitted,
    time: new Date().toISOString(),
  };
  return {
    status: failing > 0 ? 503 : 200,
    body:
      instances.length === 0 && omitted.length === 0 ? { ...body, note: NO_POLICIES_HINT } : body,
  };
}
