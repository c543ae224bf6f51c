import { type Attributes, trace } from '@opentelemetry/api';
import type { Disposer } from '../events/Listeners.js';
import { diagnosticsChannels } from '../telemetry/channels.js';

/** Names of the span events {@link traceBreakwaterEvents} adds. */
export const spanEventNames = {
  /** A retry policy is about to wait and try again. */
  retry: 'breakwater.retry',
  /** A circuit breaker, bulkhead or rate limiter refused a call. */
  rejected: 'breakwater.rejected',
  /** A circuit breaker changed state. */
  stateChange: 'breakwater.circuit_breaker.state_change',
} as const;

type Message = Readonly<Record<string, unknown>>;

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
 *   `breakwater.circuit_breaker.from`, `.to`, `.reason`, `.generation`, and when it opened
 *   from closed `.failure_rate`, `.slow_call_rate`, `.calls_in_window`; when it opened
 *   `.break_duration_ms`.
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
export function traceBreakwaterEvents(): Disposer {
  const dc = diagnosticsChannelModule();
  if (dc === undefined) return () => {};
  const handlers: [string, (message: unknown) => void][] = [
    [diagnosticsChannels.retry, onEvent(spanEventNames.retry, retryAttributes)],
    [diagnosticsChannels.rejected, onEvent(spanEventNames.rejected, rejectedAttributes)],
    [diagnosticsChannels.stateChange, onEvent(spanEventNames.stateChange, stateAttributes)],
  ];
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

/** `attributes` returns undefined for a message that gets no event. */
function onEvent(
  eventName: string,
  attributes: (message: Message) => Attributes | undefined,
): (message: unknown) => void {
  return (message) => {
    const span = trace.getActiveSpan();
    if (span === undefined || !span.isRecording()) return;
    const a = attributes(message as Message);
    if (a !== undefined) span.addEvent(eventName, a);
  };
}

function retryAttributes(m: Message): Attributes {
  const a: Attributes = {
    'breakwater.policy.name': String(m.name),
    'breakwater.retry.attempt': m.attempt as number,
    'breakwater.retry.delay_ms': m.delay as number,
  };
  const error = m.error;
  if (error instanceof Error) {
    a['exception.type'] = error.name;
    a['exception.message'] = error.message;
  }
  return a;
}

function rejectedAttributes(m: Message): Attributes | undefined {
  // Fired by the bulkhead's queue timer, outside the waiting call's context.
  if (m.reason === 'queue-timeout') return undefined;
  return {
    'breakwater.policy.kind': String(m.kind),
    'breakwater.policy.name': String(m.name),
    'breakwater.rejection.reason': String(m.reason),
  };
}

function stateAttributes(m: Message): Attributes {
  const a: Attributes = {
    'breakwater.policy.name': String(m.name),
    'breakwater.circuit_breaker.from': String(m.from),
    'breakwater.circuit_breaker.to': String(m.to),
    'breakwater.circuit_breaker.reason': String(m.reason),
    'breakwater.circuit_breaker.generation': m.generation as number,
  };
  // The rates are NaN and the window empty unless the breaker opened from closed.
  if (Number.isFinite(m.failureRate)) {
    a['breakwater.circuit_breaker.failure_rate'] = m.failureRate as number;
    a['breakwater.circuit_breaker.slow_call_rate'] = m.slowCallRate as number;
    a['breakwater.circuit_breaker.calls_in_window'] = m.callsInWindow as number;
  }
  if ((m.breakDuration as number) > 0) {
    a['breakwater.circuit_breaker.break_duration_ms'] = m.breakDuration as number;
  }
  return a;
}
