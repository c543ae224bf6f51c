import type { KindChannel } from '../../protocol/kind.js';
import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

const CHANNEL = 'breakwater:adaptive-limit:change';

/** @internal The channel of limit changes, as `diagnosticsChannels` and the docs list it. */
export const limitChangeKindChannel: KindChannel = {
  key: 'limitChange',
  channel: CHANNEL,
  message:
    "`{ name, from, to, reason, latency, baseline, answered, dropped, maxInFlight }`: an adaptive limit's window changed its limit (`reason` `drop`, `latency`, `queue`, `increase`, `custom` or `reconfigure`); published from the call whose end closed the window",
};

/** @internal */
export const limitChangeChannel: Channel = /* @__PURE__ */ diagnosticsChannel(CHANNEL);
