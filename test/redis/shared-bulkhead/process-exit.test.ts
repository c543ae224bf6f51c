/**
 * A process using the BUILT RedisBulkhead exits by itself once its calls are done and its
 * client is closed, without `dispose()`: neither the heartbeat timer (armed for the lease's
 * third, 10 s) nor the subscriber connection the bulkhead opened keeps it alive.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { runNodeScript } from '../../support/child.js';
import { describeRedis } from '../../support/redis-server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/bulkhead-exit.mjs', import.meta.url));
/** Far below the heartbeat's 10 s, far above the few ms the work takes. */
const LIMIT_MS = 8_000;

beforeAll(() => {
  if (!existsSync(`${root}dist/redis/index.js`)) {
    throw new Error('The package is not built (missing dist/redis/index.js): run npm run build');
  }
});

describeRedis('a process using RedisBulkhead', (redis) => {
  it.each(['ioredis', 'node-redis'])(
    'with %s: exits by itself after its calls and closing its client, with no dispose()',
    async (kind) => {
      const exit = await runNodeScript(fixture, [redis().port, kind], root, LIMIT_MS);
      expect(exit.killed, `still running after ${LIMIT_MS} ms`).toBe(false);
      expect(exit.stderr).toBe('');
      expect(exit.code).toBe(0);
      const out = JSON.parse(exit.stdout) as { admitted: number; inFlight: number; exitAt: number };
      expect(out).toMatchObject({ admitted: 2, inFlight: 0 });
      expect(exit.exitedAt - out.exitAt).toBeLessThan(3_000);
    },
    LIMIT_MS + 10_000,
  );
});
