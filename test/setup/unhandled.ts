/**
 * Fails the test during (or right after) which an unhandled rejection or uncaught exception
 * happened.
 *
 * What Vitest 4.1 already does on its own (checked with a throwaway experiment): it catches
 * 'unhandledRejection' and 'uncaughtException' in the test process, prints them under
 * "Unhandled Errors" and makes `vitest run` exit 1. But every test still shows as passed, the
 * error is only attributed to the file ("the latest test that might have caused it"), and an
 * error raised after a file's last test has finished (e.g. from a stray timer) can be lost
 * entirely when the file's process is torn down.
 *
 * This file keeps Vitest's behaviour (its own handlers still run, so the run still fails) and
 * adds attribution: errors are recorded here, and the afterEach hook of the test that was
 * running (or, if they arrive between tests, of the next test; or the file's afterAll) throws
 * them, so that test is reported as failed with the original error(s) as the cause.
 */
import { afterAll, afterEach } from 'vitest';

interface Recorded {
  readonly kind: 'unhandledRejection' | 'uncaughtException';
  readonly error: unknown;
}

const recorded: Recorded[] = [];

// Captured at load time, before any test can install fake timers (vi.useFakeTimers()
// replaces the global setImmediate, which would make the flush below hang).
const realSetImmediate = globalThis.setImmediate;

process.on('unhandledRejection', (reason) => {
  recorded.push({ kind: 'unhandledRejection', error: reason });
});
process.on('uncaughtException', (error) => {
  recorded.push({ kind: 'uncaughtException', error });
});

/** One macrotask turn: lets Node report rejections left unhandled by the test's last microtasks. */
function flush(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

async function throwIfRecorded(): Promise<void> {
  await flush();
  if (recorded.length === 0) return;
  const errors = recorded.splice(0, recorded.length);
  const details = errors.map((r) => `- ${r.kind}: ${describeError(r.error)}`).join('\n');
  throw new AggregateError(
    errors.map((r) => r.error),
    `${errors.length} unhandled error(s) during this test (or since the previous one):\n${details}`,
  );
}

afterEach(throwIfRecorded);
afterAll(throwIfRecorded);
