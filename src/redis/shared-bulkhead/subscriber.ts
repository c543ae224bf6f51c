import { hasMethods } from '../../validation/validate.js';
import { clientKind } from '../adapters.js';

/**
 * What a Redis bulkhead needs to hear that permits were freed: a subscription to one channel.
 * Implement it to use a client that is not recognised. Messages may be lost (pub/sub delivers
 * at most once, and nothing while disconnected): the bulkhead polls as well.
 */
export interface RedisSubscriberAdapter {
  /** Calls `listener` for every message on `channel`. */
  subscribe(channel: string, listener: () => void): PromiseLike<unknown>;
  /** Stops calling `listener` for `channel`. */
  unsubscribe(channel: string, listener: () => void): PromiseLike<unknown>;
}

interface Emitter {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  removeListener(event: string, listener: (...args: unknown[]) => void): unknown;
}

interface IoredisSubscriber extends Emitter {
  subscribe(channel: string): PromiseLike<unknown>;
  unsubscribe(channel: string): PromiseLike<unknown>;
  connect?(): PromiseLike<unknown>;
  disconnect?(): void;
  readonly status?: string;
  readonly stream?: { unref?(): void };
  duplicate?(): IoredisSubscriber;
}

interface NodeRedisSubscriber extends Emitter {
  subscribe(channel: string, listener: (message: string) => void): PromiseLike<unknown>;
  unsubscribe(channel: string, listener: (message: string) => void): PromiseLike<unknown>;
  connect?(): PromiseLike<unknown>;
  destroy?(): void;
  disconnect?(): PromiseLike<unknown>;
  unref?(): void;
  duplicate?(): NodeRedisSubscriber;
}

/** @internal A subscription source and, for a connection the bulkhead opened, how to close it. */
export interface Subscriber {
  readonly adapter: RedisSubscriberAdapter;
  /** Closes the connection when the bulkhead opened it; nothing otherwise. */
  close(): void;
}

const ignore = () => {};

function isAdapter(value: unknown): value is RedisSubscriberAdapter {
  return hasMethods(value, ['subscribe', 'unsubscribe']) && clientKind(value) === undefined;
}

function ioredisSubscriber(sub: IoredisSubscriber): RedisSubscriberAdapter {
  const routes = new Map<string, Set<() => void>>();
  let listening = false;
  const onMessage = (channel: unknown) => {
    const set = routes.get(String(channel));
    if (set !== undefined) for (const listener of set) listener();
  };
  return {
    subscribe(channel, listener) {
      if (!listening) {
        listening = true;
        sub.on('message', onMessage);
      }
      let set = routes.get(channel);
      if (set === undefined) routes.set(channel, (set = new Set()));
      set.add(listener);
      return sub.subscribe(channel);
    },
    unsubscribe(channel, listener) {
      const set = routes.get(channel);
      set?.delete(listener);
      if (set === undefined || set.size > 0) return Promise.resolve();
      routes.delete(channel);
      return sub.unsubscribe(channel);
    },
  };
}

function nodeRedisSubscriber(sub: NodeRedisSubscriber): RedisSubscriberAdapter {
  // node-redis calls each listener with the message; the bulkhead's take none.
  const wrapped = new WeakMap<() => void, (message: string) => void>();
  const wrap = (listener: () => void) => {
    let w = wrapped.get(listener);
    if (w === undefined) wrapped.set(listener, (w = () => listener()));
    return w;
  };
  return {
    subscribe: (channel, listener) => sub.subscribe(channel, wrap(listener)),
    unsubscribe: (channel, listener) => sub.unsubscribe(channel, wrap(listener)),
  };
}

/**
 * @internal The subscriber for the `subscriber` option: the one given (a client or an adapter),
 * none for `false`, or a new connection duplicated from `client` (undefined when it cannot be:
 * an adapter as the client). A connection it opens does not keep the process alive (where the
 * client allows it) and is closed by `close`; its errors are ignored (the bulkhead polls).
 */
export function makeSubscriber(given: unknown, client: unknown): Subscriber | undefined {
  if (given === false) return undefined;
  if (given !== undefined) {
    if (isAdapter(given)) return { adapter: given, close: ignore };
    const kind = clientKind(given);
    if (kind === 'ioredis') {
      return { adapter: ioredisSubscriber(given as IoredisSubscriber), close: ignore };
    }
    if (kind === 'node-redis') {
      return { adapter: nodeRedisSubscriber(given as NodeRedisSubscriber), close: ignore };
    }
    return undefined;
  }
  const kind = clientKind(client);
  if (kind === 'ioredis') {
    const dup = (client as IoredisSubscriber).duplicate?.();
    if (dup === undefined) return undefined;
    dup.on('error', ignore);
    const unref = () => dup.stream?.unref?.();
    dup.on('connect', unref);
    // Without an offline queue a subscription sent before the connection is ready fails: wait
    // for it (a lazy client, as recommended, connects only when told).
    const connected =
      dup.status === 'ready'
        ? Promise.resolve(unref())
        : new Promise<void>((resolve) => {
            dup.once('ready', () => resolve());
            if (dup.status === 'wait') Promise.resolve(dup.connect?.()).catch(ignore);
          });
    const adapter = ioredisSubscriber(dup);
    return {
      adapter: {
        subscribe: (channel, listener) =>
          connected.then(() => adapter.subscribe(channel, listener)),
        unsubscribe: (channel, listener) => adapter.unsubscribe(channel, listener),
      },
      close: () => dup.disconnect?.(),
    };
  }
  if (kind === 'node-redis') {
    const dup = (client as NodeRedisSubscriber).duplicate?.();
    if (dup === undefined) return undefined;
    dup.on('error', ignore);
    const connected = Promise.resolve(dup.connect?.()).then(() => dup.unref?.());
    connected.catch(ignore);
    const adapter = nodeRedisSubscriber(dup);
    let closed = false;
    return {
      // Subscribing before the connection is up would fail: wait for it.
      adapter: {
        subscribe: (channel, listener) =>
          connected.then(() => (closed ? undefined : adapter.subscribe(channel, listener))),
        unsubscribe: (channel, listener) => adapter.unsubscribe(channel, listener),
      },
      close: () => {
        closed = true;
        const end = () => {
          try {
            if (dup.destroy !== undefined) dup.destroy();
            else Promise.resolve(dup.disconnect?.()).catch(ignore);
          } catch {
            // Not open (yet, or any more).
          }
        };
        end();
        // A connection still being made opens after the first try: end it then too.
        connected.then(end, ignore);
      },
    };
  }
  return undefined;
}
