/**
 * Baseline rows every scenario measures in its own process, next to the library rows, and the
 * outcome checks the rows share.
 */
import { asyncTarget, syncTarget } from './targets.mjs';

export const BARE_ASYNC = 'await target()';
export const BARE_SYNC = 'target() sync';
export const BARE_AWAIT_SYNC = 'await syncTarget()';
export const BARE_ASYNC_CATCH = 'await target() in try/catch';

/**
 * `p.execute(() => service.call())` on an undecorated async method: the variant of the rows a
 * decorated method is compared with (`versus`).
 */
export const DIRECT_CLOSURE = 'pipeline called directly with a closure per call';

/** Resolved (or returned) with the target's value 1. */
export const isOne = (o) => o.ok && o.value === 1;

/** `await target()` with `const target = async () => 1`. */
export function bareAsync() {
  return {
    library: 'bare',
    variant: BARE_ASYNC,
    kind: 'async',
    prepare: () => () => asyncTarget(),
    check: isOne,
  };
}

/** `target()` with `const target = () => 1`, not awaited. */
export function bareSync() {
  return {
    library: 'bare',
    variant: BARE_SYNC,
    kind: 'sync',
    prepare: () => () => syncTarget(),
    check: isOne,
  };
}

/** `await target()` with the sync target: the floor for a sync target run through `execute`. */
export function bareAwaitSync() {
  return {
    library: 'bare',
    variant: BARE_AWAIT_SYNC,
    kind: 'async',
    prepare: () => () => syncTarget(),
    check: isOne,
  };
}

/** `await target()` inside the same try/catch loop the rejecting rows use. */
export function bareAsyncCatch() {
  return {
    library: 'bare',
    variant: BARE_ASYNC_CATCH,
    kind: 'async-catch',
    prepare: () => () => asyncTarget(),
    check: isOne,
  };
}

/** Library name of rows that measure a platform cost for comparison, not a library. */
export const REFERENCE = 'reference';

const identity = (value) => value;
const rethrow = (error) => {
  throw error;
};

/**
 * `await target().then(ok, err)`: one derived promise and one reaction more than the bare
 * call, the least any wrapper that must see an async outcome adds.
 */
export function referenceThen() {
  return {
    library: REFERENCE,
    variant: 'await target().then(ok, err)',
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => () => asyncTarget().then(identity, rethrow),
    check: isOne,
  };
}
