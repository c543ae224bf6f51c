/**
 * `node:diagnostics_channel` channels the policies publish to, so APM tools can hook in. They
 * are looked up through `process.getBuiltinModule`, never imported, so the core still loads
 * where there is no such module (browsers, edge runtimes): there every channel is a stand-in
 * that never has subscribers. Publishers check `hasSubscribers` first, so a channel nobody
 * listens to costs one property read and no message object.
 *
 * Each kind names its own channels in its folder; the one every kind that refuses calls
 * shares is here. The public `diagnosticsChannels` lists them all (`policies/kinds.ts`).
 */

/** @internal The part of a diagnostics channel the policies use. */
export interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

const SILENT: Channel = { hasSubscribers: false, publish() {} };

/** @internal The channel named `name`, or a silent stand-in where there are no channels. */
export function diagnosticsChannel(name: string): Channel {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof host?.getBuiltinModule !== 'function') return SILENT;
  try {
    const dc = host.getBuiltinModule('node:diagnostics_channel') as
      | { channel?: (name: string) => Channel }
      | undefined;
    return typeof dc?.channel === 'function' ? dc.channel(name) : SILENT;
  } catch {
    return SILENT;
  }
}

/**
 * @internal The channel of refused calls, shared by every kind that refuses them:
 * `{ kind, name, reason, error }` with the kind's name.
 */
export const REJECTED_CHANNEL = 'breakwater:rejected';

/** @internal */
export const rejectedChannel: Channel = /* @__PURE__ */ diagnosticsChannel(REJECTED_CHANNEL);
