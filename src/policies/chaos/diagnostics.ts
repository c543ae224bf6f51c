import type { KindChannel } from '../../protocol/kind.js';
import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

/** @internal The channel of chaos injections: `{ name, strategy }`, published as each is made. */
export const CHAOS_CHANNEL = 'breakwater:chaos';

/** @internal The channel of chaos injections, as `diagnosticsChannels` and the docs list it. */
export const chaosKindChannel: KindChannel = {
  key: 'chaos',
  channel: CHAOS_CHANNEL,
  message:
    '`{ name, strategy }`: a chaos step injected into a call (`strategy` `fault`, `latency`, `outcome` or `behavior`)',
};

/** @internal */
export const chaosChannel: Channel = /* @__PURE__ */ diagnosticsChannel(CHAOS_CHANNEL);
