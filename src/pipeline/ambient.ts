import type { ExecuteOptions } from './context.js';

/**
 * @internal The options a call made now takes, given its own: set by the owner of a request
 * context (`breakwater/http`), which merges in the context's deadline, criticality and signal.
 * Undefined until something opens a context, so a program that never does pays one read of
 * this binding per call and nothing else, and the core bundle carries none of the merging.
 */
export let ambientOptions:
  | ((options: ExecuteOptions | undefined) => ExecuteOptions | undefined)
  | undefined;

/** @internal Installs `merge` as {@link ambientOptions}. */
export function setAmbientOptions(
  merge: (options: ExecuteOptions | undefined) => ExecuteOptions | undefined,
): void {
  ambientOptions = merge;
}
