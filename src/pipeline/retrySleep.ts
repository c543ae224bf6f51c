import type { RetryingStep } from '../protocol/around.js';
import { type Execution, UNCUT } from './Execution.js';

/**
 * @internal Waits `delay` ms before the retry at `step` of the call's pipeline runs its next
 * attempt, then enters the steps inside it again (or unwinds, when a deadline or the caller cut
 * the wait). The executor reaches it through the retry (`RetryingStep.sleep`), so a program
 * without a retry carries none of it.
 */
export function sleepBeforeRetry(exec: Execution, step: number, delay: number): Promise<unknown> {
  const d = exec.d;
  if (!d.callerAborted) {
    // The next attempt gets a fresh signal if an inner timeout aborted the last one.
    d.abortReason = undefined;
    exec.context = undefined;
  }
  const wait = exec.startWait(step);
  const core = exec.core;
  const retry = core.steps[step] as RetryingStep;
  retry.sleeping.add(exec);
  d.waitTimer = core.clock.setTimer(() => {
    d.waitTimer = undefined;
    retry.sleeping.delete(exec);
    exec.endWait()();
  }, delay);
  return wait.then(
    () => {
      // A deadline or cancellation may have come between the timer and this continuation.
      if (d.cutAt <= step) {
        retry.abortedWhileWaiting(exec.get(core.slotOf[step]!) - 1, d.abortReason);
        return exec.finishOrChain(exec.unwind(step - 1, false, d.abortReason, exec.endTime()));
      }
      // Deadlines inside the retry belonged to the last attempt; the next one gets fresh ones.
      d.cutAt = UNCUT;
      exec.bound = Math.min(exec.deadline, exec.retryBound);
      exec.attempt = exec.get(core.slotOf[step]!);
      return exec.finishOrChain(exec.enter(step + 1, exec.time()));
    },
    (reason) => {
      retry.abortedWhileWaiting(exec.get(core.slotOf[step]!) - 1, reason);
      return exec.finishOrChain(exec.unwind(step - 1, false, reason, exec.endTime()));
    },
  );
}
