import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { DurationString } from '../../protocol/kind.js';
import {
  checkOptionsObject,
  clockOption,
  duration,
  fn,
  integer,
  MAX_KEY_LENGTH,
  numberIn,
} from '../../validation/validate.js';
import { adaptClient, type RedisClientAdapter, type RedisClientLike } from '../adapters.js';

/**
 * How many instances must have reported their breaker open, within a break, before every
 * instance is held open: a number of instances, or a share of the instances alive (each one
 * heartbeats every `pollInterval`), never fewer than `min`.
 */
export type SharedQuorum = number | { readonly share: number; readonly min?: number };

/** Options of {@link sharedSignals}. */
export interface SharedSignalsOptions {
  /**
   * An ioredis client, a node-redis v4+ client (connected), or a `RedisClientAdapter`, with the
   * options the module documentation recommends (no offline queue, a short reconnect delay).
   * Used for the scripts; never connected, quit or reconfigured by the signals.
   */
  readonly client: RedisClientLike;
  /**
   * The connection that receives the shared state's messages (pub/sub), in subscriber mode
   * from then on: a client of the same library, or `false` to learn by polling only. By default
   * the signals make one with `client.duplicate()`, connect it, and close it on `dispose()`.
   */
  readonly subscriber?: RedisClientLike | false;
  /**
   * The name the instances share (the hash tag of the keys): the breaker's name by default.
   * Non-empty, at most 1024 characters (as keys), without `{` or `}`.
   */
  readonly name?: string;
  /**
   * Start of every key, before `breaker:{name}`; at most 1024 characters, without `{` or `}`.
   * @default "breakwater:"
   */
  readonly prefix?: string;
  /**
   * Instances whose breakers opened within one break that hold every instance open: a number
   * (at least 1), or `{ share, min }`, a share in (0, 1] of the instances alive, at least `min`
   * (default 2). One instance alone opening everyone is the problem a quorum exists to avoid:
   * keep it at 2 or more. @default 2
   */
  readonly quorum?: SharedQuorum;
  /**
   * How often each instance reads the shared state (pub/sub loses messages across reconnects)
   * and says it is alive: the longest an instance that missed a message goes on unaware of a
   * shared open. An instance is live for 3 × (`pollInterval` + `timeout`) after its last
   * heartbeat, and its reports count only while it is. @default 1000
   */
  readonly pollInterval?: number | DurationString;
  /**
   * How long a half-open probe lease lasts: the instance holding it probes, the others refuse,
   * until it publishes the probe's outcome or the lease runs out. Make it longer than a probe
   * call can take (its timeout); never shorter than `timeout` (OptionsError). @default 10000
   */
  readonly probeLease?: number | DurationString;
  /**
   * Deadline of each Redis operation, in ms. No call ever waits on one: an operation that
   * fails or runs late only marks the store unavailable, and the breaker decides alone.
   * @default 200
   */
  readonly timeout?: number | DurationString;
  /**
   * This instance's identity in the shared state: its reports and its liveness are kept under
   * it, so give one that is unique among the running instances and the same after a restart
   * (a pod name, a host and slot). A restarted instance then replaces its own report; one whose
   * identity changes at each start counts only while it is live and never beside its earlier
   * selves (see below). 1 to 200 characters, without spaces, `{` or `}`.
   *
   * @default on Node.js, the host name, with `/` and the slot when one is given: PM2's
   * `NODE_APP_INSTANCE` (the same after a restart), else the cluster worker's id (new at each
   * fork). Without a slot, processes of one host share the identity and count as one
   * instance: give each its own. On runtimes without `node:os`, a random id. The report of an
   * identity that may be new after a restart (a cluster worker id, a random id) counts toward
   * the quorum only from one liveness window (3 × (`pollInterval` + `timeout`)) after its first
   * heartbeat, and not before every instance live then would have expired: never beside the
   * process it replaced.
   */
  readonly instance?: string;
  /** Receives each problem of the client's configuration once. @default console.warn, once */
  readonly onWarning?: (message: string) => void;
  /**
   * Clock of the deadlines and the poll (the shared state's times are always the breaker's
   * clock's). @default the breaker's clock
   */
  readonly clock?: Clock;
}

/** Defaults of {@link SharedSignalsOptions}. */
export const sharedSignalsDefaults = Object.freeze({
  prefix: 'breakwater:',
  quorum: 2,
  shareMin: 2,
  pollInterval: 1_000,
  probeLease: 10_000,
  timeout: 200,
});

/** @internal {@link SharedSignalsOptions} checked, with their defaults. */
export interface ResolvedSignalsOptions {
  readonly adapter: RedisClientAdapter;
  readonly client: RedisClientLike;
  readonly subscriber: RedisClientLike | false | undefined;
  readonly name: string;
  readonly prefix: string;
  readonly quorum: number;
  /** The share of live instances, or NaN for an absolute quorum. */
  readonly share: number;
  readonly pollInterval: number;
  readonly probeLease: number;
  readonly timeout: number;
  readonly instance: string;
  /** False when the identity may be new after a restart (a cluster worker id, a random id). */
  readonly instanceSurvivesRestart: boolean;
  /** This process's own id as a lease holder: the identity and a random part. */
  readonly holder: string;
  readonly onWarning: (message: string) => void;
  readonly clock: Clock;
}

const KEYS = [
  'client',
  'subscriber',
  'name',
  'prefix',
  'quorum',
  'pollInterval',
  'probeLease',
  'timeout',
  'instance',
  'onWarning',
  'clock',
];

const hasBrace = (s: string): boolean => s.includes('{') || s.includes('}');

/** @internal Checks `options`, throwing {@link OptionsError} for the first bad one. */
export function resolveSignalsOptions(
  options: SharedSignalsOptions,
  breakerName: string,
  breakerClock: Clock,
): ResolvedSignalsOptions {
  if (options === undefined) throw new OptionsError('client', undefined, 'a Redis client');
  const o = checkOptionsObject(options, KEYS, '');
  const adapter = adaptClient(o.client);
  if (adapter === undefined) {
    throw new OptionsError(
      'client',
      o.client,
      'an ioredis client, a node-redis client or a RedisClientAdapter',
    );
  }
  const subscriber = o.subscriber as RedisClientLike | false | undefined;
  if (subscriber !== undefined && subscriber !== false && adaptClient(subscriber) === undefined) {
    throw new OptionsError('subscriber', subscriber, 'an ioredis or node-redis client, or false');
  }
  const name = o.name === undefined ? breakerName : o.name;
  if (typeof name !== 'string' || name.length === 0 || !keyPart(name)) {
    throw new OptionsError(
      'name',
      name,
      `a non-empty string of at most ${MAX_KEY_LENGTH} characters without \`{\` or \`}\``,
    );
  }
  const prefix = o.prefix === undefined ? sharedSignalsDefaults.prefix : o.prefix;
  if (typeof prefix !== 'string' || !keyPart(prefix)) {
    throw new OptionsError(
      'prefix',
      prefix,
      `a string of at most ${MAX_KEY_LENGTH} characters without \`{\` or \`}\``,
    );
  }
  let quorum: number;
  let share = Number.NaN;
  const q = o.quorum;
  if (typeof q === 'object' && q !== null && !Array.isArray(q)) {
    const qo = checkOptionsObject(q, ['share', 'min'], 'quorum');
    share = numberIn(qo.share, 'quorum.share', Number.NaN, 0, 1, true);
    if (Number.isNaN(share))
      throw new OptionsError('quorum.share', undefined, 'a number in (0, 1]');
    quorum = integer(qo.min, 'quorum.min', sharedSignalsDefaults.shareMin, 1, 1_000_000);
  } else {
    quorum = integer(q, 'quorum', sharedSignalsDefaults.quorum, 1, 1_000_000);
  }
  const pollInterval = duration(
    o.pollInterval,
    'pollInterval',
    sharedSignalsDefaults.pollInterval,
    10,
  );
  const probeLease = duration(o.probeLease, 'probeLease', sharedSignalsDefaults.probeLease, 1);
  const timeout = duration(o.timeout, 'timeout', sharedSignalsDefaults.timeout, 1);
  // A lease that ends before its grant can arrive is no lease.
  if (probeLease < timeout) {
    throw new OptionsError(
      'probeLease',
      probeLease,
      `a duration of at least \`timeout\` (${timeout} ms): a lease shorter than a Redis operation's deadline can end before its grant arrives`,
    );
  }
  const identity = o.instance === undefined ? defaultIdentity() : { id: o.instance, stays: true };
  const instance = identity.id;
  if (typeof instance !== 'string' || !/^[^\s{}]{1,200}$/.test(instance)) {
    throw new OptionsError(
      'instance',
      instance,
      'a string of 1 to 200 characters without spaces, `{` or `}`',
    );
  }
  return {
    adapter,
    client: o.client as RedisClientLike,
    subscriber,
    name,
    prefix,
    quorum,
    share,
    pollInterval,
    probeLease,
    timeout,
    instance,
    instanceSurvivesRestart: identity.stays,
    holder: `${instance}#${randomId()}`,
    onWarning: fn<(message: string) => void>(o.onWarning, 'onWarning', warnOnce),
    clock: clockOption(o.clock, 'clock', breakerClock),
  };
}

const keyPart = (s: string): boolean => s.length <= MAX_KEY_LENGTH && !hasBrace(s);

let made = 0;

/**
 * A random id from the runtime's cryptographic source, never from a source an application may
 * have seeded (processes seeded alike would share their ids, as `Math.random` replaced by a
 * seeded one would give); without one, the wall clock, the high-resolution clock and a count.
 */
function randomId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID !== undefined) return c.randomUUID();
  const nano = (globalThis as { performance?: { now(): number } }).performance?.now() ?? 0;
  return `${Date.now().toString(36)}-${(nano * 1e6).toString(36)}-${(++made).toString(36)}`;
}

interface Identity {
  readonly id: unknown;
  /** The same after a restart. */
  readonly stays: boolean;
}

interface NodeHost {
  getBuiltinModule?: (id: string) => unknown;
  env?: Record<string, string | undefined>;
}

/** See {@link SharedSignalsOptions.instance}. */
function defaultIdentity(): Identity {
  const host = (globalThis as { process?: NodeHost }).process;
  let hostname: string;
  let worker: number | undefined;
  try {
    if (typeof host?.getBuiltinModule !== 'function') throw new Error('no node:os');
    hostname = (host.getBuiltinModule('node:os') as { hostname(): string }).hostname();
    worker = (host.getBuiltinModule('node:cluster') as { worker?: { id: number } } | undefined)
      ?.worker?.id;
  } catch {
    return { id: randomId(), stays: false };
  }
  const base = hostname.replace(/[\s{}]/g, '_').slice(0, 160) || 'host';
  const slot = host.env?.NODE_APP_INSTANCE;
  if (slot !== undefined && slot !== '') {
    return { id: `${base}/${slot.replace(/[\s{}]/g, '_').slice(0, 30)}`, stays: true };
  }
  if (worker !== undefined) return { id: `${base}/worker-${worker}`, stays: false };
  return { id: base, stays: true };
}

const warned = new Set<string>();

function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(`breakwater/redis: ${message}`);
}
