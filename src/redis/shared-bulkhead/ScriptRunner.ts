import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';
import type { RedisClientAdapter } from '../adapters.js';
import { type DeadlineEntry, DeadlineFifo } from '../DeadlineFifo.js';
import { StoreTimeoutError, StoreUnavailableError } from '../errors.js';

/** @internal A Lua script and the SHA1 EVALSHA runs it by (updated from SCRIPT LOAD). */
export class Script {
  loads = 0;
  loading: Promise<void> | undefined = undefined;
  constructor(
    readonly source: string,
    public sha: string,
  ) {}
}

/**
 * @internal Receives the outcome of one script call: `replied` or `failed`, once, by the
 * deadline; a reply that comes after the deadline (the command ran late) goes to `late`.
 */
export interface ScriptTarget {
  replied(reply: unknown): void;
  failed(error: unknown): void;
  late?(reply: unknown): void;
}

class Pending implements DeadlineEntry {
  done = false;
  /** 0: EVALSHA; 1: EVALSHA again after a NOSCRIPT; 2: EVAL. */
  attempt = 0;
  epoch = 0;
  constructor(
    readonly script: Script,
    readonly keys: readonly string[],
    readonly args: readonly string[],
    readonly deadline: number,
    readonly target: ScriptTarget,
  ) {}
}

function noScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

/**
 * @internal Runs scripts by EVALSHA with a deadline each (one timer for all: they share one
 * duration). NOSCRIPT (a restart, a failover, SCRIPT FLUSH) loads the script and sends again,
 * once, then falls back to EVAL.
 */
export class ScriptRunner {
  private readonly deadlines: DeadlineFifo<Pending>;
  private readonly timeoutError: StoreTimeoutError;
  private disposed = false;

  constructor(
    private readonly adapter: RedisClientAdapter,
    private readonly clock: Clock,
    private readonly name: string,
    readonly timeout: number,
  ) {
    this.deadlines = new DeadlineFifo(clock, (p) => p.target.failed(this.timeoutError));
    this.timeoutError = stackless(() => new StoreTimeoutError(name, timeout));
  }

  /** Calls waiting for a reply. */
  get pending(): number {
    return this.deadlines.size;
  }

  call(script: Script, keys: readonly string[], args: readonly string[], target: ScriptTarget) {
    const p = new Pending(script, keys, args, this.clock.now() + this.timeout, target);
    if (this.disposed) {
      target.failed(new StoreUnavailableError(this.name, new Error('disposed')));
      return;
    }
    this.deadlines.add(p);
    this.send(p, false);
  }

  /**
   * Loads `scripts` (SCRIPT LOAD, not awaited), so that calls sent after it find them: a call
   * meeting NOSCRIPT goes out again a round trip later, after calls sent behind it.
   */
  preload(scripts: readonly Script[]): void {
    for (const script of scripts) this.load(script).catch(() => {});
  }

  /** Fails every pending call with `error` and cancels the timer. */
  dispose(error: unknown): void {
    this.disposed = true;
    for (const p of this.deadlines.drain()) p.target.failed(error);
  }

  /** Sends the call by its script's SHA1, or by the script's text (`bySource`) after NOSCRIPT. */
  private send(p: Pending, bySource: boolean): void {
    if (!bySource) p.epoch = p.script.loads;
    let reply: PromiseLike<unknown>;
    try {
      reply = bySource
        ? this.adapter.eval(p.script.source, p.keys, p.args)
        : this.adapter.evalsha(p.script.sha, p.keys, p.args);
    } catch (error) {
      this.fail(p, error);
      return;
    }
    reply.then(
      (value) => this.onReply(p, value),
      (error: unknown) => this.onError(p, error),
    );
  }

  private onReply(p: Pending, reply: unknown): void {
    if (p.done) {
      // Expired (not disposed: drained entries are no longer watched), yet it ran.
      if (!this.disposed) p.target.late?.(reply);
      return;
    }
    this.deadlines.settle(p);
    p.target.replied(reply);
  }

  private onError(p: Pending, error: unknown): void {
    if (p.done) return;
    if (!noScript(error) || p.attempt === 2) {
      this.fail(p, error);
    } else if (p.attempt === 1) {
      p.attempt = 2;
      this.send(p, true);
    } else {
      p.attempt = 1;
      // Loaded since this EVALSHA went out (by another call's NOSCRIPT): send again.
      if (p.epoch !== p.script.loads) {
        this.send(p, false);
        return;
      }
      this.load(p.script).then(
        () => {
          if (!p.done) this.send(p, false);
        },
        (loadError: unknown) => this.fail(p, loadError),
      );
    }
  }

  private load(script: Script): Promise<void> {
    if (script.loading === undefined) {
      let reply: PromiseLike<unknown>;
      try {
        reply = this.adapter.scriptLoad(script.source);
      } catch (error) {
        return Promise.reject(error);
      }
      script.loading = Promise.resolve(reply).then(
        (sha) => {
          script.loading = undefined;
          if (typeof sha === 'string' && /^[0-9a-f]{40}$/.test(sha)) script.sha = sha;
          script.loads++;
        },
        (error: unknown) => {
          script.loading = undefined;
          throw error;
        },
      );
    }
    return script.loading;
  }

  private fail(p: Pending, error: unknown): void {
    if (p.done) return;
    this.deadlines.settle(p);
    p.target.failed(
      error instanceof StoreUnavailableError
        ? error
        : stackless(() => new StoreUnavailableError(this.name, error)),
    );
  }
}
