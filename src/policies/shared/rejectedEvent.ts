import type { KindSpanEvent } from '../../protocol/kind.js';
import { REJECTED_CHANNEL } from '../../telemetry/channels.js';

/** @internal The span event of a refused call. */
export const REJECTED_EVENT = 'breakwater.rejected';

/**
 * @internal The span event of the calls a kind refuses, made from its messages on the shared
 * channel of refusals: `breakwater.policy.kind`, `.name` and `breakwater.rejection.reason`.
 * Refusals for a reason in `outsideCall` get none: a timer fires them, outside the async
 * context of the call refused, so they would land on another call's span.
 */
export function rejectedSpanEvent(
  kind: string,
  outsideCall: readonly string[] = [],
): KindSpanEvent {
  return {
    channel: REJECTED_CHANNEL,
    name: REJECTED_EVENT,
    attributes(m) {
      if (m.kind !== kind || outsideCall.includes(m.reason as string)) return undefined;
      return {
        'breakwater.policy.kind': kind,
        'breakwater.policy.name': String(m.name),
        'breakwater.rejection.reason': String(m.reason),
      };
    },
  };
}
