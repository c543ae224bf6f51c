/**
 * Child processes that use the BUILT package (dist/, loaded by its name) on the system clock
 * must exit by themselves once their calls are done: no timer or listener of the library may
 * keep Node running. `npm test` builds before Vitest runs.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ChildExit, runNodeScript } from '../support/child.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
/** Generous: the work itself takes a few seconds at most. */
const LIMIT_MS = 20_000;

function runFixture(name: string, args: readonly string[] = []): Promise<ChildExit> {
  return runNodeScript(`${fixtures}${name}`, args, root, LIMIT_MS);
}

beforeAll(() => {
  for (const file of ['dist/index.js', 'dist/testing/index.js']) {
    if (!existsSync(`${root}${file}`)) {
      throw new Error(
        `The package is not built (missing ${file}): run npm run build first ` +
          '(npm test does this before running Vitest).',
      );
    }
  }
});

describe('a process using breakwater exits by itself', () => {
  it(
    'after 10,000 pipelines (retry + breaker + timeout(1000) + bulkhead, system clock) each ran one call',
    async () => {
      const exit = await runFixture('many-pipelines.mjs', ['10000']);
      expect(exit.killed, `still running after ${LIMIT_MS} ms`).toBe(false);
      expect(exit.stderr).toBe('');
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(JSON.parse(exit.stdout)).toEqual({
        calls: 10_000,
        allValuesRight: true,
        keepingAlive: [],
      });
    },
    LIMIT_MS + 10_000,
  );

  it(
    'after 10,000 pipelines whose calls never settle and time out (aggressive, 50 ms)',
    async () => {
      const exit = await runFixture('many-timeouts.mjs', ['10000']);
      expect(exit.killed, `still running after ${LIMIT_MS} ms`).toBe(false);
      expect(exit.stderr).toBe('');
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(JSON.parse(exit.stdout)).toEqual({
        calls: 10_000,
        timedOut: 10_000,
        attempts: 20_000,
        keepingAlive: [],
      });
    },
    LIMIT_MS + 10_000,
  );

  it(
    'after 1,000 pipelines with a hedge whose delay (60 s) outlives their calls, its timers still armed',
    async () => {
      const exit = await runFixture('hedged-calls.mjs', ['1000']);
      expect(exit.killed, `still running after ${LIMIT_MS} ms`).toBe(false);
      expect(exit.stderr).toBe('');
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(JSON.parse(exit.stdout)).toEqual({ calls: 1_000, answered: 1_000 });
    },
    LIMIT_MS + 10_000,
  );

  it(
    'with 1,000 breakers tripped on the system clock, their breaks (60 s) still running',
    async () => {
      const exit = await runFixture('tripped-breakers.mjs', ['1000']);
      expect(exit.killed, `still running after ${LIMIT_MS} ms`).toBe(false);
      expect(exit.stderr).toBe('');
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(JSON.parse(exit.stdout)).toEqual({
        breakers: 1_000,
        refused: 1_000,
        keepingAlive: [],
      });
    },
    LIMIT_MS + 10_000,
  );

  it(
    'after calls through retries spending from retry budgets of each model, their timers armed',
    async () => {
      const exit = await runFixture('retry-budgets.mjs', ['100']);
      expect(exit.killed, `still running after ${LIMIT_MS} ms`).toBe(false);
      expect(exit.stderr).toBe('');
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(JSON.parse(exit.stdout)).toEqual({ calls: 300, active: 0, keepingAlive: [] });
    },
    LIMIT_MS + 10_000,
  );

  it.each(['cooperative', 'aggressive'])(
    'right after its one call through a %s timeout of 2 h, whose timer ticks every 225 s',
    async (strategy) => {
      const exit = await runFixture('one-long-timeout.mjs', [strategy]);
      expect(exit.killed, `still running after ${LIMIT_MS} ms`).toBe(false);
      expect(exit.stderr).toBe('');
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(JSON.parse(exit.stdout)).toEqual({ value: 'done', keepingAlive: [] });
    },
    LIMIT_MS + 10_000,
  );
});
