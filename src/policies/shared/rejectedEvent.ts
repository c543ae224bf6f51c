import type { KindChannel, KindSpanEvent } from '../../protocol/kind.js';
import { REJECTED_CHANNEL } from '../../telemetry/channels.js';

/** @internal The channel of refused calls, as `diagnosticsChannels` and the docs list it. */
export const rejectedKindChannel: KindChannel = {
  key: 'rejected',
  channel: REJECTED_CHANNEL,
  message: '`{ kind, name, reason, error }`',
};

/** @internal The span event of a refused call. */
export const REJECTED_EVENT = 'breakwater.rejected';

/**
 * @internal The span event of the calls a kind refuses, made from its messages on the shared
 * channel of refusals: `breakwater.policy.kind`, `.name` and `breakwater.rejection.reason`.
 * Refusals for a reason in `outsideCall` get none: a timer fires them, outside the async
 * context of the call refused, so they would land on another call's span. `reasons`: those
 * that make an event, for the docs.
 */
export function rejectedSpanEvent(
  kind: string,
  reasons: readonly string[],
  outsideCall: readonly string[] = [],
): KindSpanEvent {
  return {
    channel: REJECTED_CHANNEL,
    name: REJECTED_EVENT,
    key: 'rejected',
    doc: '`breakwater.policy.kind` ({kinds}), `breakwater.policy.name`, `breakwater.rejection.reason` ({reasons})',
    values: { kinds: [kind], reasons },
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
