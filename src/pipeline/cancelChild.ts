import { type Execution, F_DONE } from './Execution.js';

/**
 * @internal Gives up on child execution `exec` (a hedge's attempt another won, a flight every
 * caller left): its signal aborts with `reason` and a wait or a race inside it ends, but work
 * in flight runs on, holding its permits, until it ends; a failure with `reason` then counts
 * for no policy inside (see `Execution.isCallerAbort`).
 */
export function cancelChild(exec: Execution, reason: unknown): void {
  if ((exec.flags & F_DONE) !== 0) return;
  const d = exec.d;
  d.callerAborted = true;
  d.cutAt = -1;
  exec.abortAttempt(reason);
  if (d.waitStep >= 0) exec.cancelWait(reason);
  // A hedge or a coalescing step inside: its race or flight.
  else if (exec.race !== undefined) exec.race.cancel(reason, exec);
}
