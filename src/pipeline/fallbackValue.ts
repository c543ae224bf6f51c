import type { Execution } from './Execution.js';

/**
 * @internal A fallback's replacement was a promise (or another thenable): once it settles, the
 * steps outside the fallback, from `from` outward, see its outcome. Reached through the fallback
 * (`FallbackStep.adopt`), so a program without a fallback carries none of it.
 */
export function adoptReplacement(
  exec: Execution,
  from: number,
  replacement: unknown,
): Promise<unknown> {
  return Promise.resolve(replacement).then(
    (v) => exec.finishOrChain(exec.unwind(from, true, v, exec.endTime())),
    (e) => exec.finishOrChain(exec.unwind(from, false, e, exec.endTime())),
  );
}
