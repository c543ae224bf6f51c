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
  return Promise.resolve(promise).then(
    (value) => unwindSaved(p, saved, true, value, started),
    (error) => unwindSaved(p, saved, false, error, started),
  );
}

function unwindSaved(
  p: Pipeline,
  saved: number[],
  ok: boolean,
  value: unknown,
  started: number,
): unknown {
  const depth = p.syncDepth++;
  const base = depth * saved.length;
  for (let i = 0; i < saved.length; i++) p.syncTokens[base + i] = saved[i]!;
  try {
    return p.unwindSync(saved.length - 1, ok, value, base, p.elapsedSince(started));
  } finally {
    p.syncDepth--;
  }
}
