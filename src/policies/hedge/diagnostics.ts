import type { KindChannel } from '../../protocol/kind.js';
import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

/** @internal The channel of hedges, as `diagnosticsChannels` and the docs list it. */
export const hedgeKindChannel: KindChannel = {
  key: 'hedge',
  channel: 'breakwater:hedge',
  message:
    "`{ name, hedge, reason }`: a hedge started (`hedge` 1 for the first; `reason` `delay`, `failure`, or `pushback` when the wait a failure's server pushback asked for passed)",
};

/** @internal */
export const hedgeChannel: Channel = /* @__PURE__ */ diagnosticsChannel(hedgeKindChannel.channel);
