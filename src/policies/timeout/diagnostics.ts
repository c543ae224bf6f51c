import type { KindChannel } from '../../protocol/kind.js';
import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

/** @internal The channel of passed deadlines, as `diagnosticsChannels` and the docs list it. */
export const timeoutKindChannel: KindChannel = {
  key: 'timeout',
  channel: 'breakwater:timeout',
  message: '`{ name, timeout }`',
};

/** @internal */
export const timeoutChannel: Channel = /* @__PURE__ */ diagnosticsChannel(
  timeoutKindChannel.channel,
);
