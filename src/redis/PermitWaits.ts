import type { Clock } from '../clock/Clock.js';
import { Wakeups } from '../clock/Wakeups.js';

/** @internal Where {@link PermitWaits} asks for permits: 0 when taken, else ms until free. */
export interface PermitSource {
  tryAcquire(key: string, permits: number): Promise<number>;
}

/** A caller of `acquire` waiting for the time its refusal named, to ask again. */
class Retry {
  done = false;
  constructor(
    readonly run: () => void,
    readonly fail: (reason: unknown) => void,
  ) {}
  wake(): void {
    if (!this.done) this.run();
  }
}

/**
 * @internal The `acquire` calls of a limiter whose decisions are asynchronous: each asks its
 * source again when the last refusal said the permits would be free, until it gets them or
 * that time is past its deadline.
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
      const retry = new Retry(
        () => ask(),
        (reason) => {
          finish();
          reject(reason);
        },
      );
      const onAbort = () => retry.fail(signal!.reason);
      const finish = () => {
        retry.done = true;
        this.retries.delete(retry);
        signal?.removeEventListener('abort', onAbort);
      };
      const ask = (): void => {
        this.source.tryAcquire(key, permits).then((wait) => {
          if (retry.done) return;
          if (wait === 0) {
            finish();
            resolve();
            return;
          }
          const now = this.clock.now();
          if (now + wait > until) {
            finish();
            reject(this.tooLate(now + wait));
            return;
          }
          Wakeups.of(this.clock, true).schedule(now + wait, now, retry);
        }, retry.fail);
      };
      this.retries.add(retry);
      signal?.addEventListener('abort', onAbort);
      ask();
    });
  }

  /** Rejects every wait with `error`. */
  failAll(error: unknown): void {
    for (const r of [...this.retries]) r.fail(error);
  }
}
