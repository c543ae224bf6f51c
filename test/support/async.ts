import type { ExecutionContext } from '../../src/index.js';

/** A promise with its resolve and reject functions, for targets the test settles by hand. */
export function deferred<T = unknown>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Records how a promise settled, so a test can check it without awaiting it (and without leaving
 * its rejection unhandled). With a `clock`, `at` is the clock's reading when it settled.
 */
export function track<T>(promise: Promise<T>, clock?: { now(): number }) {
  const state = {
    settled: false,
    ok: undefined as boolean | undefined,
    value: undefined as T | undefined,
    error: undefined as unknown,
    at: undefined as number | undefined,
    done: undefined as unknown as Promise<void>,
  };
  state.done = promise.then(
    (value) => {
      state.settled = true;
      state.ok = true;
      state.value = value;
      state.at = clock?.now();
    },
    (error) => {
      state.settled = true;
      state.ok = false;
      state.error = error;
      state.at = clock?.now();
    },
  );
  return state;
}

/** Work that ends only when its signal aborts, rejecting with the signal's reason (as fetch does). */
export function untilAborted({ signal }: ExecutionContext): Promise<never> {
  return new Promise((_, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason));
  });
}

/** One turn of the event loop (setImmediate): what is left after the microtasks runs first. */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Waits `ms` of real time. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Makes `call` again and again, `pauseMs` apart, from `loops` loops at once, while `body`
 * runs (a dashboard reads rates while calls go on); then stops and waits for the last calls
 * before answering what `body` answered.
 */
export async function whileCalling<T>(
  call: () => unknown,
  pauseMs: number,
  body: () => Promise<T>,
  loops = 1,
): Promise<T> {
  let running = true;
  const load = Array.from({ length: loops }, async () => {
    while (running) {
      await call();
      await sleep(pauseMs);
    }
  });
  try {
    return await body();
  } finally {
    running = false;
    await Promise.all(load);
  }
}
