import type { Clock } from '../clock/Clock.js';
import { stackless } from '../errors/BreakwaterError.js';
import { UsageError } from '../errors/OptionsError.js';
import type { RedisClientAdapter } from './adapters.js';
import { type DeadlineEntry, DeadlineFifo } from './DeadlineFifo.js';
import { StoreTimeoutError, StoreUnavailableError } from './errors.js';
import { decisionOf, GCRA_SCRIPT, GCRA_SCRIPT_SHA, type GcraDecision } from './script.js';
import {
  decideArgumentsError,
  type RedisGcraStoreOptions,
  resolveStoreOptions,
} from './storeOptions.js';

/**
 * @internal Receives the outcome of one decision sent by {@link RedisGcraStore.send}: exactly
 * one of `decided` and `failed` is called, once.
 */
export interface DecisionTarget {
  decided(decision: GcraDecision): void;
  failed(error: unknown): void;
}

/**
 * @internal What one decision asks: the script's ARGV (see {@link GCRA_SCRIPT}) and, as
 * numbers, the rate and burst its reply is read with. A limiter makes its usual one once.
 */
export class GcraRequest {
  readonly args: readonly string[];

  constructor(
    readonly intervalUs: number,
    readonly burst: number,
    permits: number,
    nowUs: number | undefined,
    lease: number | undefined,
  ) {
    const args = [String(intervalUs), String(burst), String(permits)];
    // Trailing ARGV left out rather than sent empty: fewer arguments to write and to parse.
    if (nowUs !== undefined || lease !== undefined)
      args.push(nowUs === undefined ? '' : String(nowUs));
    if (lease !== undefined) args.push(String(lease));
    this.args = args;
  }
}

class PendingDecision implements DeadlineEntry {
  done = false;
  /** 0: EVALSHA; 1: EVALSHA again after a NOSCRIPT; 2: EVAL. */
  attempt = 0;
  /** The store's load count when the last EVALSHA was sent. */
  epoch = 0;
  constructor(
    readonly keys: readonly string[],
    readonly request: GcraRequest,
    readonly deadline: number,
    readonly target: DecisionTarget,
  ) {}
}

/** The target of a public `decide` call: its promise. */
class PromiseTarget implements DecisionTarget {
  constructor(
    readonly decided: (decision: GcraDecision) => void,
    readonly failed: (error: unknown) => void,
  ) {}
}

function noScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
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
    const { adapter, name, prefix, timeout, onWarning, clock } = resolveStoreOptions(options);
    this.timeout = timeout;
    this.clock = clock;
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
    const invalid = decideArgumentsError(key, permits, intervalUs, burst, nowUs, lease);
    if (invalid !== undefined) return Promise.reject(invalid);
    if (this.disposed) {
      return Promise.reject(new UsageError(`Store "${this.name}" was disposed`));
    }
    const request = new GcraRequest(intervalUs, burst, permits, nowUs, lease);
    return new Promise<GcraDecision>((resolve, reject) => {
      this.send(key, request, new PromiseTarget(resolve, reject), this.clock.now());
    });
  }

  /**
   * @internal `decide` for a caller that checked its arguments once (a limiter), whose
   * `request` may serve many decisions, and the outcome goes to `target` rather
   * than to a promise of its own, so a decision costs one promise reaction (the client's).
   * `now` is the store's clock read by the caller: the deadline runs from it.
   */
  send(key: string, request: GcraRequest, target: DecisionTarget, now: number): void {
    if (this.disposed) {
      target.failed(new UsageError(`Store "${this.name}" was disposed`));
      return;
    }
    const decision = new PendingDecision(
      [this.keyStart + key],
      request,
      now + this.timeout,
      target,
    );
    this.deadlines.add(decision);
    this.sendScript(decision, false);
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
    for (const decision of this.deadlines.drain()) decision.target.failed(error);
  }

  /** Sends the call by its script's SHA1, or by the script's text (`bySource`) after NOSCRIPT. */
  private sendScript(decision: PendingDecision, bySource: boolean): void {
    if (!bySource) decision.epoch = this.loads;
    let reply: PromiseLike<unknown>;
    try {
      reply = bySource
        ? this.adapter.eval(GCRA_SCRIPT, decision.keys, decision.request.args)
        : this.adapter.evalsha(this.sha, decision.keys, decision.request.args);
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
    const result = decisionOf(reply, decision.request.intervalUs, decision.request.burst);
    if (result !== undefined) {
      this.deadlines.settle(decision);
      decision.target.decided(result);
      return;
    }
    this.fail(decision, new TypeError(`unexpected reply to the GCRA script: ${String(reply)}`));
  }

  private onError(decision: PendingDecision, error: unknown): void {
    if (decision.done) return;
    if (!noScript(error) || decision.attempt === 2) {
      this.fail(decision, error);
    } else if (decision.attempt === 1) {
      decision.attempt = 2;
      this.sendScript(decision, true);
    } else {
      decision.attempt = 1;
      // Loaded since this EVALSHA went out (by another decision's NOSCRIPT): send again.
      if (decision.epoch !== this.loads) {
        this.sendScript(decision, false);
        return;
      }
      this.load().then(
        () => {
          if (!decision.done) this.sendScript(decision, false);
        },
        (loadError: StoreUnavailableError) => {
          if (decision.done) return;
          this.deadlines.settle(decision);
          decision.target.failed(loadError);
        },
      );
    }
  }

  private fail(decision: PendingDecision, error: unknown): void {
    if (decision.done) return;
    this.deadlines.settle(decision);
    decision.target.failed(stackless(() => new StoreUnavailableError(this.name, error)));
  }

  private readonly expire = (decision: PendingDecision): void => {
    decision.target.failed(this.timeoutError);
  };
}
