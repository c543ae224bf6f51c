/**
 * Open-loop load in real time: starts one call every `1000 / ratePerSecond` ms for `durationMs`
 * whatever the calls before it did (a service's callers do not wait for each other), catching
 * up on calls a late timer missed, and waits for every call to settle.
 *
 * @example
 * ```ts
 * const settled = await openLoop(200, 1_000, (i) => fetch(url)); // 200 calls over 1 s
 * ```
 */
export async function openLoop<T>(
  ratePerSecond: number,
  durationMs: number,
  call: (index: number, startedAt: number) => Promise<T>,
): Promise<PromiseSettledResult<T>[]> {
  // Each outcome is taken as it comes, so that a refusal is never an unhandled rejection.
  const calls: Promise<PromiseSettledResult<T>>[] = [];
  const settle = (p: Promise<T>): Promise<PromiseSettledResult<T>> =>
    p.then(
      (value) => ({ status: 'fulfilled', value }),
      (reason: unknown) => ({ status: 'rejected', reason }),
    );
  const total = Math.round((ratePerSecond * durationMs) / 1000);
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(
        total,
        Math.floor(((performance.now() - start) * ratePerSecond) / 1000) + 1,
      );
      while (calls.length < due) calls.push(settle(call(calls.length, performance.now())));
      if (calls.length >= total) resolve();
      else setTimeout(tick, 1000 / ratePerSecond);
    };
    tick();
  });
  return Promise.all(calls);
}
