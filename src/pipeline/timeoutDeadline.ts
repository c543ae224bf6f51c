import type { DeadlineStep, TimedExecution } from '../protocol/around.js';
import { type Execution, F_DONE, PASSED } from './Execution.js';

// The executor's side of a timeout's deadlines, which the timeout calls from its deadline
// queue: it comes with the timeout, so a program without one carries none of it.

/** @internal True while `exec` still waits on the deadline registered at `step` with `stamp`. */
export function deadlineLive(timed: TimedExecution, step: number, stamp: number): boolean {
  const exec = timed as Execution;
  // After the caller cancelled, the call's deadline no longer matters: its outcome is the
  // caller's reason, not a timeout.
  return (
    (exec.flags & F_DONE) === 0 &&
    exec.detour?.callerAborted !== true &&
    exec.get(exec.core.slotOf[step]!) === stamp
  );
}

/**
 * @internal The deadline `exec` registered at `step` with `policy` passed: the attempt is cut there (a
 * wait inside ends, a hedge's race is cancelled, an attempt is given up on when it does not
 * listen or the timeout is aggressive).
 */
export function deadlinePassed(timed: TimedExecution, step: number, policy: DeadlineStep): void {
  const exec = timed as Execution;
  exec.set(exec.core.slotOf[step]!, PASSED);
  const d = exec.d;
  if (step < d.cutAt) d.cutAt = step;
  const error = policy.rejection();
  exec.abortAttempt(error);
  if (d.waitStep > step) exec.cancelWait(error);
  else if (exec.race !== undefined) exec.race.cancel(error, exec);
  else if (exec.abandons(policy.aggressive)) exec.abandon(step, error);
}
