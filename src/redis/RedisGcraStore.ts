import type { Clock } from '../clock/Clock.js';
import { systemClock } from '../clock/systemClock.js';
import { stackless } from '../errors/BreakwaterError.js';
import { OptionsError, UsageError } from '../errors/OptionsError.js';
import { checkOptionsObject, clockOption, duration, fn, keyError } from '../validation/validate.js';
import { adaptClient, type RedisClientAdapter, type RedisClientLike } from './adapters.js';
import { type DeadlineEntry, DeadlineFifo } from './DeadlineFifo.js';
import { StoreTimeoutError, StoreUnavailableError } from './errors.js';
import { GCRA_SCRIPT, GCRA_SCRIPT_SHA } from './script.js';

/** The outcome of one GCRA decision. */
export interface GcraDecision {
  /** Whether the permits were granted (and recorded). */
  readonly allowed: boolean;
  /** When refused: microseconds until the same request would be granted; 0 when allowed. */
  readonly retryAfterUs: number;
  /** Permits that could still be granted right now, after this decision. */
  readonly remaining: number;
  /** Permits taken: `permits`, up to `lease` when more were free; 0 when refused. */
  readonly granted: number;
  /** Microseconds the key's TAT was ahead of the server's time before the decision (>= 0). */
  readonly aheadUs: number;
}

/** Options of {@link RedisGcraStore}. */
export interface RedisGcraStoreOptions {
  /**
   * An ioredis client (`new Redis(...)`), a node-redis v4+ client (`createClient(...)`, connected),
   * or a {@link RedisClientAdapter}. The store never connects, quits or reconfigures it.
   * Recommended client options (see the module documentation): ioredis
   * `enableOfflineQueue: false, maxRetriesPerRequest: 0` and a `retryStrategy` capped at
   * 500 ms; node-redis `disableOfflineQueue: true` and a `reconnectStrategy` capped likewise.
   */
  readonly client: RedisClientLike;
  /**
   * The rate limiter's name: the hash tag of its keys. Non-empty, without `{` or `}`.
   * @default "rateLimiter"
   */
  readonly name?: string;
  /** Start of every key, before the hash tag; may be empty; without `{` or `}`. @default "breakwater:" */
  readonly prefix?: string;
  /**
   * Deadline of each decision in ms, from the call to the reply, reloading the script
   * included. A decision without a reply by then rejects with {@link StoreTimeoutError}.
   * The default is far above a reply's usual time (well under 1 ms on a local network), so
   * that a GC pause, a saturated CPU or a slow command on the server does not trip it.
   * @default 200
   */
  readonly timeout?: number;
  /**
   * Receives each problem of the client's configuration (an offline queue left on) once, at
   * construction. @default console.warn, once per message per process
   */
  readonly onWarning?: (message: string) => void;
  /** Clock of the deadlines. @default the system clock */
  readonly clock?: Clock;
}

/** Defaults of {@link RedisGcraStoreOptions}. */
export const redisGcraStoreDefaults = Object.freeze({
  name: 'rateLimiter',
  prefix: 'breakwater:',
  timeout: 200,
});

/**
 * The largest `permits * intervalUs` and `burst * intervalUs` (2^50 us, about 35 years): with
 * `nowUs` below 2^52 every value the script computes stays below 2^53, where doubles (Lua's
 * numbers) are exact integers.
 */
export const MAX_SPAN_US = 2 ** 50;
/** The largest `nowUs` (2^52 us since the epoch: the year 2112). */
export const MAX_NOW_US = 2 ** 52;

const warned = new Set<string>();

function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(`breakwater/redis: ${message}`);
}

class PendingDecision implements DeadlineEntry {
  done = false;
  /** 0: EVALSHA; 1: EVALSHA again after a NOSCRIPT; 2: EVAL. */
  attempt = 0;
  /** The store's load count when the last EVALSHA was sent. */
  epoch = 0;
  constructor(
    readonly keys: readonly string[],
    readonly args: readonly string[],
    readonly deadline: number,
    readonly resolve: (decision: GcraDecision) => void,
    readonly reject: (error: unknown) => void,
  ) {}
}

function noScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

function hasBrace(s: string): boolean {
  return s.includes('{') || s.includes('}');
}

/**
 * Generic cell rate algorithm (GCRA) decisions kept in Redis: one integer per key, the
 * theoretical arrival time (TAT) in microseconds, updated by one Lua script per decision.
 *
 * Keys are `${prefix}{${name}}:${key}`: the braces are a hash tag, so on a Redis Cluster all
 * the keys of one limiter live in one slot (and on one node). Every written key expires when
 * its TAT passes, when it would read the same as a missing key.
 *
 * Decisions go out by EVALSHA; a NOSCRIPT reply (after a restart, a failover or SCRIPT FLUSH)
 * loads the script and sends again, once, then falls back to EVAL (on a cluster the load may
 * reach another node). Each decision has its own deadline (`timeout`), all served by one
 * timer. A reply after the deadline is ignored.
 */
export class RedisGcraStore {
  /** The limiter's name, the hash tag of its keys. */
  readonly name: string;
  /** Start of every key before the hash tag. */
  readonly prefix: string;
  /** Deadline of each decision, in ms. */
  readonly timeout: number;
  private readonly adapter: RedisClientAdapter;
  private readonly clock: Clock;
  private readonly keyStart: string;
  private readonly deadlines: DeadlineFifo<PendingDecision>;
  private readonly timeoutError: StoreTimeoutError;
  private sha = GCRA_SCRIPT_SHA;
  private loads = 0;
  private loading: Promise<void> | undefined;
  private disposed = false;

  constructor(options: RedisGcraStoreOptions) {
    if (options === undefined) throw new OptionsError('client', undefined, 'a Redis client');
    const o = checkOptionsObject(
      options,
      ['client', 'name', 'prefix', 'timeout', 'onWarning', 'clock'],
      '',
    );
    const adapter = adaptClient(o.client);
    if (adapter === undefined) {
      throw new OptionsError(
        'client',
        o.client,
        'an ioredis client, a node-redis client or a RedisClientAdapter ' +
          '(an object with evalsha, eval and scriptLoad)',
      );
    }
    const name = o.name === undefined ? redisGcraStoreDefaults.name : o.name;
    if (typeof name !== 'string' || name.length === 0 || hasBrace(name)) {
      throw new OptionsError('name', name, 'a non-empty string without `{` or `}`');
    }
    const prefix = o.prefix === undefined ? redisGcraStoreDefaults.prefix : o.prefix;
    if (typeof prefix !== 'string' || hasBrace(prefix)) {
      throw new OptionsError('prefix', prefix, 'a string without `{` or `}`');
    }
    this.timeout = duration(o.timeout, 'timeout', redisGcraStoreDefaults.timeout, 1);
    const onWarning = fn<(message: string) => void>(o.onWarning, 'onWarning', warnOnce);
    this.clock = clockOption(o.clock, 'clock', systemClock);
    this.adapter = adapter;
    this.name = name;
    this.prefix = prefix;
    this.keyStart = `${prefix}{${name}}:`;
    this.deadlines = new DeadlineFifo(this.clock, this.expire);
    this.timeoutError = stackless(() => new StoreTimeoutError(name, this.timeout));
    for (const warning of adapter.warnings?.() ?? []) onWarning(warning);
  }

  /** The Redis key holding `key`'s state. */
  redisKey(key: string): string {
    return this.keyStart + key;
  }

  /** Decisions waiting for a reply. */
  get pending(): number {
    return this.deadlines.size;
  }

  /**
   * Asks for `permits` under a GCRA of one permit per `intervalUs` microseconds with bursts of
   * up to `burst`. Granted permits are recorded; refused ones change nothing.
   *
   * `nowUs` replaces the server's clock (Redis TIME), for tests and replays only. With
   * `lease` (>= permits), takes up to `lease` permits when at least `permits` are free, so
   * the caller can spend the rest itself (see `granted` and `aheadUs`).
   * Rejects with {@link StoreTimeoutError} when no reply comes within `timeout`, with
   * {@link StoreUnavailableError} when the client or server fails, and with OptionsError for
   * invalid arguments (`key` must be a string of at most 1,024 characters).
   */
  decide(
    key: string,
    permits: number,
    intervalUs: number,
    burst: number,
    nowUs?: number,
    lease?: number,
  ): Promise<GcraDecision> {
    const invalid = checkArguments(key, permits, intervalUs, burst, nowUs, lease);
    if (invalid !== undefined) return Promise.reject(invalid);
    if (this.disposed) {
      return Promise.reject(new UsageError(`Store "${this.name}" was disposed`));
    }
    return new Promise<GcraDecision>((resolve, reject) => {
      const decision = new PendingDecision(
        [this.keyStart + key],
        [
          String(intervalUs),
          String(burst),
          String(permits),
          nowUs === undefined ? '' : String(nowUs),
          lease === undefined ? '' : String(lease),
        ],
        this.clock.now() + this.timeout,
        resolve,
        reject,
      );
      this.deadlines.add(decision);
      this.sendSha(decision);
    });
  }

  /**
   * Loads the script into the server's script cache now (SCRIPT LOAD), so that the first
   * decision does not pay a NOSCRIPT round trip. Optional: decisions load it when missing.
   * Rejects with {@link StoreUnavailableError}; it has no deadline of its own.
   */
  load(): Promise<void> {
    if (this.loading === undefined) {
      let reply: PromiseLike<unknown>;
      try {
        reply = this.adapter.scriptLoad(GCRA_SCRIPT);
      } catch (error) {
        return Promise.reject(stackless(() => new StoreUnavailableError(this.name, error)));
      }
      this.loading = Promise.resolve(reply).then(
        (sha) => {
          this.loading = undefined;
          if (typeof sha === 'string' && /^[0-9a-f]{40}$/.test(sha)) this.sha = sha;
          this.loads++;
        },
        (error: unknown) => {
          this.loading = undefined;
          throw stackless(() => new StoreUnavailableError(this.name, error));
        },
      );
    }
    return this.loading;
  }

  /**
   * Stops the store: pending decisions reject with UsageError, later ones too, and the timer
   * is cancelled. The client is left as it is.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const error = new UsageError(`Store "${this.name}" was disposed`);
    for (const decision of this.deadlines.drain()) decision.reject(error);
  }

  private sendSha(decision: PendingDecision): void {
    decision.epoch = this.loads;
    let reply: PromiseLike<unknown>;
    try {
      reply = this.adapter.evalsha(this.sha, decision.keys, decision.args);
    } catch (error) {
      this.fail(decision, error);
      return;
    }
    reply.then(
      (value) => this.onReply(decision, value),
      (error: unknown) => this.onError(decision, error),
    );
  }

  private sendEval(decision: PendingDecision): void {
    let reply: PromiseLike<unknown>;
    try {
      reply = this.adapter.eval(GCRA_SCRIPT, decision.keys, decision.args);
    } catch (error) {
      this.fail(decision, error);
      return;
    }
    reply.then(
      (value) => this.onReply(decision, value),
      (error: unknown) => this.onError(decision, error),
    );
  }

  private onReply(decision: PendingDecision, reply: unknown): void {
    if (decision.done) return;
    if (Array.isArray(reply) && reply.length === 5) {
      const allowed = integerOf(reply[0]);
      const retryAfterUs = integerOf(reply[1]);
      const remaining = integerOf(reply[2]);
      const granted = integerOf(reply[3]);
      const aheadUs = integerOf(reply[4]);
      if (
        (allowed === 0 || allowed === 1) &&
        retryAfterUs >= 0 &&
        remaining >= 0 &&
        granted >= 0 &&
        aheadUs >= 0
      ) {
        this.deadlines.settle(decision);
        decision.resolve({ allowed: allowed === 1, retryAfterUs, remaining, granted, aheadUs });
        return;
      }
    }
    this.fail(decision, new TypeError(`unexpected reply to the GCRA script: ${String(reply)}`));
  }

  private onError(decision: PendingDecision, error: unknown): void {
    if (decision.done) return;
    if (!noScript(error) || decision.attempt === 2) {
      this.fail(decision, error);
    } else if (decision.attempt === 1) {
      decision.attempt = 2;
      this.sendEval(decision);
    } else {
      decision.attempt = 1;
      // Loaded since this EVALSHA went out (by another decision's NOSCRIPT): send again.
      if (decision.epoch !== this.loads) {
        this.sendSha(decision);
        return;
      }
      this.load().then(
        () => {
          if (!decision.done) this.sendSha(decision);
        },
        (loadError: StoreUnavailableError) => {
          if (decision.done) return;
          this.deadlines.settle(decision);
          decision.reject(loadError);
        },
      );
    }
  }

  private fail(decision: PendingDecision, error: unknown): void {
    if (decision.done) return;
    this.deadlines.settle(decision);
    decision.reject(stackless(() => new StoreUnavailableError(this.name, error)));
  }

  private readonly expire = (decision: PendingDecision): void => {
    decision.reject(this.timeoutError);
  };
}

/**
 * An integer reply as a number: clients give numbers, but a client told to map integers to
 * strings or bigints (node-redis `typeMapping`) is served too. NaN for anything else.
 */
function integerOf(value: unknown): number {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : Number.NaN;
  if (typeof value === 'bigint' || (typeof value === 'string' && /^-?\d+$/.test(value))) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : Number.NaN;
  }
  return Number.NaN;
}

function checkArguments(
  key: unknown,
  permits: number,
  intervalUs: number,
  burst: number,
  nowUs: number | undefined,
  lease: number | undefined,
): OptionsError | undefined {
  const badKey = keyError(key);
  if (badKey !== undefined) return badKey;
  if (!Number.isSafeInteger(intervalUs) || intervalUs < 1 || intervalUs > MAX_SPAN_US) {
    return new OptionsError('intervalUs', intervalUs, `an integer in [1, ${MAX_SPAN_US}]`);
  }
  const maxCount = Math.floor(MAX_SPAN_US / intervalUs);
  if (!Number.isSafeInteger(permits) || permits < 1 || permits > maxCount) {
    return new OptionsError(
      'permits',
      permits,
      `an integer in [1, ${maxCount}] (2^50 / intervalUs)`,
    );
  }
  if (!Number.isSafeInteger(burst) || burst < 1 || burst > maxCount) {
    return new OptionsError('burst', burst, `an integer in [1, ${maxCount}] (2^50 / intervalUs)`);
  }
  if (nowUs !== undefined && (!Number.isSafeInteger(nowUs) || nowUs < 0 || nowUs > MAX_NOW_US)) {
    return new OptionsError('nowUs', nowUs, `an integer in [0, ${MAX_NOW_US}] or undefined`);
  }
  if (
    lease !== undefined &&
    (!Number.isSafeInteger(lease) || lease < permits || lease > maxCount)
  ) {
    return new OptionsError('lease', lease, `an integer in [${permits}, ${maxCount}] or undefined`);
  }
  return undefined;
}
