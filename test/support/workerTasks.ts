/**
 * Real worker threads for the tests of breakwater/workers: a build of the `workers` and
 * `testing` entries (a worker runs no TypeScript), and test/workers/fixtures/task.mjs started
 * on one of its tasks.
 */
import { Worker } from 'node:worker_threads';
import { buildLibrary, root } from './build.js';

/** Where the worker finds the built entries. */
export interface BuiltEntries {
  readonly workers: string;
  readonly testing: string;
}

/** Builds the `workers` and `testing` entries into test-artifacts/`name`/. */
export async function buildWorkerEntries(name: string): Promise<BuiltEntries> {
  const workers = await buildLibrary(name, {
    workers: 'src/workers/index.ts',
    testing: 'src/testing/index.ts',
  });
  return { workers, testing: workers.replace(/workers\.js$/, 'testing.js') };
}

/** A worker running one task: its messages as they come, and the result it ends with. */
export interface TaskWorker<R> {
  readonly worker: Worker;
  readonly messages: Record<string, unknown>[];
  /** The task's result (its `done` message); rejects when the worker fails or exits first. */
  readonly result: Promise<R>;
  /** Resolves with the first message for which `test` holds. */
  next(test: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/** Starts `task` of test/workers/fixtures/task.mjs in a new worker with `data`. */
export function startTask<R = Record<string, unknown>>(
  lib: BuiltEntries,
  task: string,
  data: Record<string, unknown>,
): TaskWorker<R> {
  const worker = new Worker(new URL('test/workers/fixtures/task.mjs', `file://${root}`), {
    workerData: { lib, task, ...data },
  });
  const messages: Record<string, unknown>[] = [];
  const waiting: { test: (m: Record<string, unknown>) => boolean; resolve: (m: never) => void }[] =
    [];
  worker.on('message', (m: Record<string, unknown>) => {
    messages.push(m);
    for (const w of waiting.filter((x) => x.test(m))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(m as never);
    }
  });
  const result = new Promise<R>((resolve, reject) => {
    worker.on('message', (m: Record<string, unknown>) => {
      if (m.done === true) resolve(m as R);
    });
    worker.on('error', reject);
    worker.on('exit', (code) =>
      reject(new Error(`worker ${task} exited (${code}) before its result`)),
    );
  });
  // A test that does not wait for the result (a worker it terminates) leaves it unhandled.
  result.catch(() => {});
  return {
    worker,
    messages,
    result,
    next: (test) => {
      const seen = messages.find(test);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.push({ test, resolve }));
    },
  };
}
