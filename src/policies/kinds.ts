import type { ErrorCode as AnyErrorCode } from '../errors/codes.js';
import type { AnyPolicyKind } from '../protocol/kind.js';
import type { StateChangeEvent } from './circuit-breaker/events.js';
import {
  type DiagnosticsChannels,
  KIND_CODES,
  LIBRARY_KINDS,
  type LibraryKindData,
  type LibraryKindName,
  type SpanEventNames,
} from './kindTable.js';

/** The descriptors of a kind table's entries, in its order. */
export function kindsOf(table: {
  readonly [name: string]: { readonly kind: AnyPolicyKind };
}): readonly AnyPolicyKind[] {
  return Object.values(table).map((entry) => entry.kind);
}

/**
 * The library's policy kinds, in the order snapshots, listings and metrics report them (the
 * order of `LIBRARY_KINDS`, whose entries they are). The registry, config data, decorators,
 * metric collection, the Prometheus and OpenTelemetry exporters and the dashboard read this
 * list (and a registry's own `kinds`); nothing else names a kind.
 */
export const POLICY_KINDS: readonly AnyPolicyKind[] = /* @__PURE__ */ kindsOf(LIBRARY_KINDS);

type KindCodes = (typeof KIND_CODES)[keyof typeof KIND_CODES];
/** The intersection of the members of a union (the code objects, merged). */
type Merged<U> = (U extends unknown ? (u: U) => void : never) extends (m: infer M) => void
  ? M
  : never;

/** The codes of a table of code objects, merged into one object. */
export function codesOf<T extends Readonly<Record<string, Readonly<Record<string, string>>>>>(
  table: T,
): { readonly [K in keyof Merged<T[keyof T]>]: Merged<T[keyof T]>[K] } {
  return Object.assign({}, ...Object.values(table));
}

/**
 * Stable codes carried by every error breakwater throws; safe to match on in logs and code.
 * Each kind's errors own their codes (in its folder); this gathers them, so only a program
 * that reads it carries every code.
 */
export const ErrorCode: {
  readonly [K in keyof Merged<KindCodes>]: Merged<KindCodes>[K];
} = /* @__PURE__ */ codesOf(KIND_CODES);

/** One of the {@link ErrorCode} values. */
export type ErrorCode = AnyErrorCode;

/** The channels the kinds publish to, by key (a channel several kinds share, once). */
export function channelsOf(kinds: readonly AnyPolicyKind[]): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const kind of kinds) for (const c of kind.channels ?? []) out[c.key] = c.channel;
  return Object.freeze(out);
}

/** The span events the kinds make, by key (an event several kinds make, once). */
export function spanEventsOf(kinds: readonly AnyPolicyKind[]): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const kind of kinds) {
    for (const e of kind.spanEvents ?? []) if (e.key !== undefined) out[e.key] = e.name;
  }
  return Object.freeze(out);
}

/**
 * Names of the channels breakwater publishes to, gathered from the descriptors of the
 * library's kinds (`channels`); docs/observability.md lists each with its message.
 */
export const diagnosticsChannels: DiagnosticsChannels = /* @__PURE__ */ channelsOf(
  POLICY_KINDS,
) as unknown as DiagnosticsChannels;

/**
 * Names of the span events `traceBreakwaterEvents` adds, gathered from the descriptors of the
 * library's kinds (`spanEvents`).
 */
export const spanEventNames: SpanEventNames = /* @__PURE__ */ spanEventsOf(
  POLICY_KINDS,
) as unknown as SpanEventNames;

/**
 * The types of the library's kinds' config data, by kind name (each kind's `name` and
 * `section`), from which `RegistryConfig` is built.
 *
 * @example
 * ```json
 * {
 *   "defaults": { "circuitBreaker": { "breakDuration": "30s" }, "timeout": { "timeout": "2s" } },
 *   "circuitBreakers": { "payments": { "failureRateThreshold": 0.25, "breakDuration": "1m" } },
 *   "retries": { "payments": { "maxAttempts": 4, "delay": "200ms", "budget": "payments" } },
 *   "retryBudgets": { "payments": { "ratio": 0.1 } },
 *   "rateLimiters": { "search": { "limit": 50, "period": "1s", "maxWait": "200ms" } },
 *   "keys": { "maxKeys": 50000, "idleTimeout": "15m" }
 * }
 * ```
 */
export interface PolicyKindConfigs extends KindConfigTable {}

type KindConfigTable = { readonly [K in LibraryKindName]: LibraryKindData[K]['config'] };

interface InstanceEntry {
  /** The instance's registry name. */
  readonly name: string;
  /** The key of a keyed instance (absent for named ones). */
  readonly key?: string;
}

/**
 * One instance of a registry, as plain JSON-serializable data. Instances of a kind given to
 * the registry with its `kinds` option appear too, with their kind's `name` and the state
 * and stats of its `view`: cast an entry whose `kind` is theirs.
 */
export type RegistryInstanceSnapshot = {
  [K in LibraryKindName]: InstanceEntry & { readonly kind: K } & LibraryKindData[K]['snapshot'];
}[LibraryKindName];

/**
 * A state change of one of a registry's instances, as plain data: a breaker's (the fields of
 * its `StateChangeEvent`), or of a kind with states given to the registry (its own event).
 */
export interface RegistryTransition extends StateChangeEvent {
  /** The registry name of the breaker. */
  readonly name: string;
  /** The key of a keyed breaker (absent for named ones). */
  readonly key?: string;
  /** When it happened, in ms since the Unix epoch (`Date.now()`). */
  readonly at: number;
}
