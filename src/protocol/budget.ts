/**
 * What retry and hedging policies spend from: a retry budget shared by any number of them,
 * the `RetryBudget` that `retryBudget(...)` makes (the only implementation their `budget`
 * option accepts). The calls are made by the policies (never by user code), and each is a few
 * field updates: a budget sits on the hot path of every call through a policy that holds one.
 *
 * One call through a policy with a budget makes, in order: `callStarted()` once; for each
 * attempt that ends, `attemptSucceeded()` or `attemptFailed()` (a failure the policy would retry
 * or hedge on, even with no attempt left; a failure it does not retry, such as a refusal by an
 * inner policy or an error `handle` turns down, and a cut by the caller or a deadline, are
 * neither, as in gRPC's throttling); for each extra attempt it wants (a retry, a hedge),
 * `trySpend()`, asked only once nothing else stands in the way of that attempt (a granted
 * attempt counts as spent), and, when that granted attempt really ends (a hedging loser
 * included, or a retry delay cut short), `extraEnded()`; and `callEnded()` once, when the
 * caller's call settles.
 */
export interface AttemptBudget {
  /** A call begins its first attempt under a policy spending from this budget. */
  callStarted(): void;
  /** That call settled, whatever its outcome. */
  callEnded(): void;
  /** An attempt succeeded (a result the policy does not retry). */
  attemptSucceeded(): void;
  /** An attempt failed in a way the policy retries or hedges on. */
  attemptFailed(): void;
  /** Asks for one extra attempt (a retry or a hedge): true when granted, and then spent. */
  trySpend(): boolean;
  /** An extra attempt granted by `trySpend` ended. */
  extraEnded(): void;
}
