import type { ExecutionContext } from '../../src/index.js';
import type { ManualClock } from '../../src/testing/index.js';

/** How long one attempt takes (ms), drawn for it alone; `now` is when it starts. */
export type Latency = (now: number) => number;

/**
 * A dependency simulated on a ManualClock: each attempt takes the latency drawn for it (from a
 * seeded source the test passes in) and resolves on a clock timer. One that `honoursSignal`
 * rejects with the signal's reason as soon as it aborts (as fetch does); one that does not
 * answers at its time whatever its signal says.
 */
export function simulatedDependency(
  clock: ManualClock,
  latency: Latency,
  { honoursSignal = true }: { honoursSignal?: boolean } = {},
) {
  const dep = {
    /** Attempts that reached the dependency. */
    started: 0,
    /** Attempts still running (answered or aborted ones excluded). */
    inFlight: 0,
    /** The most attempts running at once. */
    maxInFlight: 0,
    call(context: ExecutionContext): Promise<string> {
      dep.started++;
      dep.inFlight++;
      dep.maxInFlight = Math.max(dep.maxInFlight, dep.inFlight);
      const ms = latency(clock.now());
      const hedge = context.hedge;
      return new Promise<string>((resolve, reject) => {
        let done = false;
        const timer = clock.setTimer(() => {
          if (done) return;
          done = true;
          dep.inFlight--;
          resolve(`answer of attempt ${hedge}`);
        }, ms);
        if (!honoursSignal) return;
        const { signal } = context;
        const stop = () => {
          if (done) return;
          done = true;
          dep.inFlight--;
          clock.clearTimer(timer);
          reject(signal.reason);
        };
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      });
    },
  };
  return dep;
}
