import type { Clock } from '../clock/Clock.js';
import { Wakeups } from '../clock/Wakeups.js';

/** @internal Where {@link PermitWaits} asks for permits: 0 when taken, else ms until free. */
export interface PermitSource {
  tryAcquire(key: string, permits: number): Promise<number>;
}

/** @internal Who waits for permits: told once that it got them or that it never will. */
export interface PermitWaiter {
  /** False once the waiter gave up: it is asked no more, and told nothing. */
  live(): boolean;
  admitted(): void;
  rejected(reason: unknown): void;
}

/** One waiter asking its source again at the time its last refusal named. */
class Retry {
  done = false;
  constructor(
    private readonly waits: PermitWaits,
    readonly waiter: PermitWaiter,
    readonly key: string,
    readonly permits: number,
    readonly until: number,
  ) {}

  wake(): void {
    if (this.done) return;
    if (this.waiter.live()) this.waits.ask(this);
    else this.waits.finish(this);
  }

  readonly answered = (wait: number): void => this.waits.answered(this, wait);
  readonly fail = (reason: unknown): void => this.waits.fail(this, reason);
}

/**
 * @internal The waits of a limiter whose decisions are asynchronous (`acquire`, and calls
 * through a pipeline): each asks its source again when the last refusal said the permits
 * would be free, until it gets them, that time is past its deadline, or it gives up.
 */
export class PermitWaits {
  private readonly retries = new Set<Retry>();

  constructor(
    private readonly source: PermitSource,
    private readonly clock: Clock,
    /** The error for a wait whose permits are free at `freeAt`, after its deadline. */
    private readonly tooLate: (freeAt: number) => Error,
  ) {}

  /**
   * Resolves once `permits` for `key` are taken. Rejects with `tooLate` when a refusal names
   * a time after `until`, with the reason of `signal` when it aborts, and with what the source
   * rejects with.
   */
  wait(key: string, permits: number, until: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let done = false;
      const onAbort = () => retry.fail(signal!.reason);
      const end = () => {
        done = true;
        signal?.removeEventListener('abort', onAbort);
      };
      const retry = this.start(key, permits, until, {
        live: () => !done,
        admitted() {
          end();
          resolve();
        },
        rejected(reason) {
          end();
          reject(reason);
        },
      });
      signal?.addEventListener('abort', onAbort);
    });
  }

  /** Tells `waiter` when `permits` for `key` are taken, or that they will not be by `until`. */
  waitFor(key: string, permits: number, until: number, waiter: PermitWaiter): void {
    this.start(key, permits, until, waiter);
  }

  /** Rejects every wait with `error`. */
  failAll(error: unknown): void {
    for (const r of [...this.retries]) this.fail(r, error);
  }

  /** @internal */
  ask(retry: Retry): void {
    this.source.tryAcquire(retry.key, retry.permits).then(retry.answered, retry.fail);
  }

  /** @internal */
  answered(retry: Retry, wait: number): void {
    if (retry.done) return;
    if (!retry.waiter.live()) {
      this.finish(retry);
      return;
    }
    if (wait === 0) {
      this.finish(retry);
      retry.waiter.admitted();
      return;
    }
    const now = this.clock.now();
    if (now + wait > retry.until) {
      this.finish(retry);
      retry.waiter.rejected(this.tooLate(now + wait));
      return;
    }
    Wakeups.of(this.clock, true).schedule(now + wait, now, retry);
  }

  /** @internal */
  fail(retry: Retry, reason: unknown): void {
    if (retry.done) return;
    this.finish(retry);
    if (retry.waiter.live()) retry.waiter.rejected(reason);
  }

  /** @internal */
  finish(retry: Retry): void {
    retry.done = true;
    this.retries.delete(retry);
  }

  private start(key: string, permits: number, until: number, waiter: PermitWaiter): Retry {
    const retry = new Retry(this, waiter, key, permits, until);
    this.retries.add(retry);
    this.ask(retry);
    return retry;
  }
}
