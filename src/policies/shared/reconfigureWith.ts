/** A policy that checks resolved options before it takes them. */
interface Reconfigurable<R> {
  checkOptions(options: R): void;
  applyOptions(options: R): void;
}

/**
 * @internal A kind's `reconfigure`: checks that `policy` can take `options` (throws
 * `OptionsError` otherwise) and returns the function that applies them.
 */
export function checkThenApply<R>(policy: Reconfigurable<R>, options: R): () => void {
  policy.checkOptions(options);
  return () => policy.applyOptions(options);
}
