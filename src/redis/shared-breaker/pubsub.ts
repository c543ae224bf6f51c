import { clientKind, type RedisClientLike } from '../adapters.js';

/** @internal A channel's subscription: `close()` ends it (and the connection, when owned). */
export interface Subscription {
  close(): void;
}

/** @internal What a subscription tells its owner. */
export interface SubscriptionHandler {
  message(text: string): void;
  /** The connection is (again) ready: messages sent while it was away are lost. */
  ready(): void;
  /** The subscription could not be made; the owner may try again later. */
  broken(): void;
}

type Handler = (...args: unknown[]) => void;

interface EmitterLike {
  on(event: string, listener: Handler): unknown;
  off?(event: string, listener: Handler): unknown;
  removeListener?(event: string, listener: Handler): unknown;
}

interface IoredisSubscriber extends EmitterLike {
  duplicate(override?: object): IoredisSubscriber;
  connect(): Promise<unknown>;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  disconnect(): void;
}

interface NodeRedisSubscriber extends EmitterLike {
  duplicate(): NodeRedisSubscriber;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  destroy?(): void;
  disconnect?(): Promise<unknown>;
}

const ignore = (): void => {};

function off(emitter: EmitterLike, event: string, listener: Handler): void {
  if (emitter.off !== undefined) emitter.off(event, listener);
  else emitter.removeListener?.(event, listener);
}

/**
 * @internal Subscribes to `channel` on `client` (an ioredis or node-redis client), or on a
 * connection duplicated from it when `owned`. Undefined when the client is neither (an
 * adapter): the owner then learns by polling only. Both clients subscribe again by themselves
 * after a reconnect and then say `ready`.
 */
export function subscribe(
  client: RedisClientLike,
  owned: boolean,
  channel: string,
  handler: SubscriptionHandler,
): Subscription | undefined {
  const kind = clientKind(client);
  const source = client as unknown as { duplicate?: unknown };
  if (owned && typeof source.duplicate !== 'function') return undefined;
  if (kind === 'ioredis') return subscribeIoredis(client as never, owned, channel, handler);
  if (kind === 'node-redis') return subscribeNodeRedis(client as never, owned, channel, handler);
  return undefined;
}

function subscribeIoredis(
  client: IoredisSubscriber,
  owned: boolean,
  channel: string,
  handler: SubscriptionHandler,
): Subscription {
  // A subscriber connection sends nothing but its subscriptions: queueing them while it
  // (re)connects is what makes it subscribe again.
  const sub = owned ? client.duplicate({ lazyConnect: true, enableOfflineQueue: true }) : client;
  const onMessage: Handler = (ch, text) => {
    if (ch === channel) handler.message(String(text));
  };
  const onReady: Handler = () => handler.ready();
  if (owned) sub.on('error', ignore);
  sub.on('message', onMessage);
  sub.on('ready', onReady);
  if (owned) sub.connect().catch(ignore);
  sub.subscribe(channel).catch(() => handler.broken());
  return {
    close() {
      off(sub, 'message', onMessage);
      off(sub, 'ready', onReady);
      if (owned) sub.disconnect();
      else sub.unsubscribe(channel).catch(ignore);
    },
  };
}

function subscribeNodeRedis(
  client: NodeRedisSubscriber,
  owned: boolean,
  channel: string,
  handler: SubscriptionHandler,
): Subscription {
  const sub = owned ? client.duplicate() : client;
  const listener = (text: string): void => handler.message(String(text));
  const onReady: Handler = () => handler.ready();
  let closed = false;
  if (owned) sub.on('error', ignore);
  sub.on('ready', onReady);
  (owned ? sub.connect() : Promise.resolve())
    .then(() => (closed ? undefined : sub.subscribe(channel, listener)))
    .catch(() => {
      if (!closed) handler.broken();
    });
  return {
    close() {
      closed = true;
      off(sub, 'ready', onReady);
      if (!owned) {
        sub.unsubscribe(channel, listener).catch(ignore);
      } else if (sub.destroy !== undefined) {
        sub.destroy();
      } else {
        sub.disconnect?.().catch(ignore);
      }
    },
  };
}
