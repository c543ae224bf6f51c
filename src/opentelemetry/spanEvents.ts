import { trace } from '@opentelemetry/api';
import type { Disposer } from '../events/Listeners.js';
import { POLICY_KINDS } from '../policies/kinds.js';
import type { AnyPolicyKind, KindSpanEvent } from '../protocol/kind.js';
import { checkKinds } from '../registry/kindsOption.js';
import { checkOptionsObject } from '../validation/validate.js';

export { spanEventNames } from '../policies/kinds.js';

/** Options of {@link traceBreakwaterEvents}. */
export interface TraceEventsOptions {
  /**
   * Policy kinds defined outside the library whose `spanEvents` are added too (those given to
   * a `Registry` with its `kinds` option).
   * @default []
   */
  readonly kinds?: readonly AnyPolicyKind[];
}

/**
 * Adds an event to the active span (`trace.getActiveSpan()` of `@opentelemetry/api`) for each
 * retry, rejection and circuit breaker state change of any breakwater policy in the process,
 * read from breakwater's `node:diagnostics_channel` channels. These happen in the call they
 * concern, so they land on that call's span: a retry on the span the pipeline runs in, a
 * rejection on the span of the refused call, a breaker opening on the span of the call whose
 * failure opened it. An open breaker notices that its break is over when it is next used or
 * read, so the half-open transition lands on the span of the next call (or of a metrics scrape
 * or health check that read it first). Nothing is done when no span is active or the active
 * span is not recording; policies publish nothing while no one subscribes.
 *
 * Each kind lists the events it makes (its descriptor's `spanEvents`); those of kinds defined
 * outside the library are added when given in `options.kinds`. Throws `OptionsError` for an
 * invalid option.
 *
 * Where `node:diagnostics_channel` cannot be reached through `process.getBuiltinModule`
 * (browsers, edge runtimes, Node.js before 20.16) the policies publish nothing and this adds
 * no events.
 *
 * Timeouts and bulkhead queue timeouts are left out: one timer serves all the calls of a
 * policy, so they fire outside the async context of the call that timed out and would land on
 * another call's span. The call's own span sees them as the `TimeoutError` or
 * `BulkheadRejectedError` its promise rejects with, and metrics count them.
 *
 * Events and attributes (all listed in docs/observability.md):
 * - `breakwater.retry`: `breakwater.policy.name`, `breakwater.retry.attempt` (the attempt that
 *   failed, from 1), `breakwater.retry.delay_ms`, and `exception.type` / `exception.message`
 *   when an error (rather than a result) caused the retry.
 * - `breakwater.rejected`: `breakwater.policy.kind` (`circuitBreaker`, `bulkhead`,
 *   `rateLimiter`), `breakwater.policy.name`, `breakwater.rejection.reason`.
 * - `breakwater.circuit_breaker.state_change`: `breakwater.policy.name`,
 *   `breakwater.circuit_breaker.from`, `.to`, `.reason`, `.generation`, and when its window
 *   opened it from closed `.calls_in_window` (a consecutive window's run), with a count or
 *   time window `.failure_rate` and `.slow_call_rate`; when it opened `.break_duration_ms`.
 *
 * The name of a keyed breaker is `"<name>:<key>"`. Names and keys are attribute values, never
 * parsed, so no escaping is needed.
 *
 * @returns a function that unsubscribes from the channels.
 *
 * @example
 * ```ts
 * const stop = traceBreakwaterEvents();
 * await tracer.startActiveSpan('checkout', async (span) => {
 *   try {
 *     return await payments.execute(charge); // its retries become events of `checkout`
 *   } finally {
 *     span.end();
 *   }
 * });
 * ```
 */
export function traceBreakwaterEvents(options?: TraceEventsOptions): Disposer {
  const o = checkOptionsObject(options, ['kinds'], '') as TraceEventsOptions;
  const kinds = [...POLICY_KINDS, ...checkKinds(o.kinds, POLICY_KINDS)];
  const dc = diagnosticsChannelModule();
  if (dc === undefined) return () => {};
  // One subscriber per channel, for every event made from it (kinds share the one of refusals).
  const byChannel = new Map<string, KindSpanEvent[]>();
  for (const kind of kinds) {
    for (const event of kind.spanEvents ?? []) {
      const events = byChannel.get(event.channel);
      if (events === undefined) byChannel.set(event.channel, [event]);
      else events.push(event);
    }
  }
  const handlers = [...byChannel].map(([channel, events]) => [channel, onMessage(events)] as const);
  for (const [channel, handler] of handlers) dc.subscribe(channel, handler);
  let live = true;
  return () => {
    if (!live) return;
    live = false;
    for (const [channel, handler] of handlers) dc.unsubscribe(channel, handler);
  };
}

interface DiagnosticsChannelModule {
  subscribe(name: string, onMessage: (message: unknown) => void): void;
  unsubscribe(name: string, onMessage: (message: unknown) => void): unknown;
}

/**
 * `node:diagnostics_channel`, looked up as the policies look it up (never imported, so this
 * module loads in browsers and edge runtimes too): where the policies find no such module they
 * publish nothing, and there is nothing to subscribe to.
 */
function diagnosticsChannelModule(): DiagnosticsChannelModule | undefined {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof host?.getBuiltinModule !== 'function') return undefined;
  try {
    const dc = host.getBuiltinModule('node:diagnostics_channel') as
      | Partial<DiagnosticsChannelModule>
      | undefined;
    return typeof dc?.subscribe === 'function' && typeof dc.unsubscribe === 'function'
      ? (dc as DiagnosticsChannelModule)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Adds to the active span each event `events` make of a message. */
function onMessage(events: readonly KindSpanEvent[]): (message: unknown) => void {
  return (message) => {
    const span = trace.getActiveSpan();
    if (span === undefined || !span.isRecording()) return;
    for (const event of events) {
      const a = event.attributes(message as Readonly<Record<string, unknown>>);
      if (a !== undefined) span.addEvent(event.name, a);
    }
  };
}
