/**
 * A process using the BUILT breakwater/redis exits by itself once its decisions are done and
 * its client is closed: the store's deadline timer (still armed for a 60 s timeout) must not
 * keep it alive. `npm test` builds before Vitest runs.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { runNodeScript } from '../support/child.js';
import { describeRedis } from '../support/redis-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/idle-store.mjs', import.meta.url));
/** Far below the store's 60 s timeout, far above the few ms the work takes. */
const LIMIT_MS = 15_000;

beforeAll(() => {
  if (!existsSync(`${root}dist/redis/index.js`)) {
    throw new Error(
      'The package is not built (missing dist/redis/index.js): run npm run build first ' +
        '(npm test does this before running Vitest).',
    );
  }
});

describeRedis('a process using breakwater/redis', (redis) => {
  it(
    'exits by itself after its decisions and client.quit(), although the store timer is still armed',
    async () => {
      const exit = await runNodeScript(fixture, [redis().port], root, LIMIT_MS);
      expect(exit.killed, `still running after ${LIMIT_MS} ms`).toBe(false);
      expect(exit.stderr).toBe('');
      expect(exit.code).toBe(0);
      const out = JSON.parse(exit.stdout) as {
        allowed: boolean[];
        pending: number;
        exitAt: number;
      };
      expect(out.allowed).toEqual([true, true, true, false, false, true, true, true]);
      expect(out.pending).toBe(0);
      // Gone within a few seconds of its last line, not after the store's 60 s timeout.
      expect(exit.exitedAt - out.exitAt).toBeLessThan(5_000);
    },
    LIMIT_MS + 10_000,
  );
});
