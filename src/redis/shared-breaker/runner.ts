import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';
import type { RedisClientAdapter } from '../adapters.js';
import { StoreTimeoutError, StoreUnavailableError } from '../errors.js';
import type { LuaScript } from './scripts.js';

function noScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

/**
 * @internal Runs the signals' scripts: EVALSHA, and EVAL (which also puts the script back in
 * the server's cache) on NOSCRIPT, after a restart, a failover or SCRIPT FLUSH. Each run has
 * its own deadline, a timer that never keeps the process alive: these runs are background
 * work, rare (state changes, probes, one poll per interval), and no call waits on them.
 */
export class ScriptRunner {
  /** EVALs sent because the server had lost a script. */
  reloads = 0;
  private readonly timeoutError: StoreTimeoutError;

  constructor(
    private readonly adapter: RedisClientAdapter,
    private readonly storeName: string,
    private readonly timeout: number,
    private readonly clock: Clock,
  ) {
    this.timeoutError = stackless(() => new StoreTimeoutError(storeName, timeout));
  }

  /** Resolves with the script's reply; rejects with a StoreError by the deadline. */
  run(script: LuaScript, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let done = false;
      const timer = this.clock.setTimer(
        () => {
          if (done) return;
          // After a stalled event loop, timers run before the replies that came in meanwhile:
          // let those be read first (the next turn), so that a busy CPU does not mark Redis away.
          setTimeout(() => {
            if (done) return;
            done = true;
            reject(this.timeoutError);
          }, 0);
        },
        this.timeout,
        false,
      );
      const settle = (error: unknown, value?: unknown): void => {
        if (done) return;
        done = true;
        this.clock.clearTimer(timer);
        if (error === undefined) resolve(value);
        else reject(stackless(() => new StoreUnavailableError(this.storeName, error)));
      };
      const send = (useEval: boolean): void => {
        let reply: PromiseLike<unknown>;
        try {
          reply = useEval
            ? this.adapter.eval(script.text, keys, args)
            : this.adapter.evalsha(script.sha, keys, args);
        } catch (error) {
          settle(error);
          return;
        }
        reply.then(
          (value) => settle(undefined, value),
          (error: unknown) => {
            if (!useEval && noScript(error) && !done) {
              this.reloads++;
              send(true);
            } else {
              settle(error ?? new Error('failed'));
            }
          },
        );
      };
      send(false);
    });
  }
}
