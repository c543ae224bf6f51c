import type { Step } from './Execution.js';
import type { Pipeline } from './Pipeline.js';

/**
 * @internal `executeSync` got a promise from its function: releases the gates admitted under
 * the tokens at `base` (and runs the fallbacks) when the promise settles, timed from `started`.
 * The `n` tokens are copied now: later calls reuse their span of the pipeline's array.
 */
export function trackLate(
  p: Pipeline,
  promise: PromiseLike<unknown>,
  base: number,
  n: number,
  started: number,
): Promise<unknown> {
  const saved = p.syncTokens.slice(base, base + n);
  // The steps too: the pipeline may plan again before the promise settles (see `replan`).
  const steps = p.core.steps;
  return Promise.resolve(promise).then(
    (value) => unwindSaved(p, steps, saved, true, value, started),
    (error) => unwindSaved(p, steps, saved, false, error, started),
  );
}

function unwindSaved(
  p: Pipeline,
  steps: readonly Step[],
  saved: number[],
  ok: boolean,
  value: unknown,
  started: number,
): unknown {
  const depth = p.syncDepth++;
  const base = depth * saved.length;
  for (let i = 0; i < saved.length; i++) p.syncTokens[base + i] = saved[i]!;
  try {
    return p.unwindSync(saved.length - 1, ok, value, base, p.elapsedSince(started), steps);
  } finally {
    p.syncDepth--;
  }
}
