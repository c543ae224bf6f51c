/**
 * What waiting costs Redis as the fleet grows: 2, 4, 6 and 8 real processes (the BUILT
 * package) with 3 callers each contend for 2 permits, and the server's own command counts
 * (INFO commandstats, script calls) give the round trips per permit granted. The processes
 * start their calls together, once all are ready. Leases are long enough that no heartbeat
 * falls in a run: what is left is acquire, release, wake-ups and polls.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runNodeScript } from '../../support/child.js';
import { startCountingServer } from '../../support/counting-server.js';
import { describeRedis } from '../../support/redis-server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/bulkhead-caller.mjs', import.meta.url));

let http: Awaited<ReturnType<typeof startCountingServer>>;

beforeAll(async () => {
  if (!existsSync(`${root}dist/redis/index.js`)) {
    throw new Error('The package is not built (missing dist/redis/index.js): run npm run build');
  }
  http = await startCountingServer();
});

afterAll(async () => {
  await http?.close();
});

/** Script calls (EVALSHA and EVAL) the server ran since its statistics were reset. */
function scriptCalls(info: string): number {
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(m[1]);
  return calls;
}

describeRedis('RedisBulkhead wake-ups across processes', (redis) => {
  it('hands a freed permit to one waiting process: round trips per permit stay flat from 2 to 8 processes', async () => {
    const perPermit = new Map<number, number>();
    for (const processes of [2, 4, 6, 8]) {
      const name = `wake-${process.pid}-${processes}`;
      await redis().command('CONFIG', 'RESETSTAT');
      const exits = await Promise.all(
        Array.from({ length: processes }, () =>
          runNodeScript(
            fixture,
            // Once all are ready, 2 s of calls.
            [redis().port, http.port, name, 2, 3, 0, 2_000, 30_000, 0, 10_000, processes],
            root,
            60_000,
          ),
        ),
      );
      for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);
      const reports = exits.map((exit) => JSON.parse(exit.stdout) as { calls: number });
      const calls = reports.reduce((n, r) => n + r.calls, 0);
      // Every process took part: none was starved of permits.
      for (const r of reports) expect(r.calls).toBeGreaterThan(0);
      const scripts = scriptCalls(String(await redis().command('INFO', 'commandstats')));
      perPermit.set(processes, scripts / calls);
      console.log(
        `${processes} processes x 3 callers, 2 permits: ${calls} permits, ${scripts} script calls, ${(scripts / calls).toFixed(2)} per permit`,
      );
    }
    for (const processes of [4, 6, 8]) {
      expect(perPermit.get(processes)!).toBeLessThan(perPermit.get(2)! + 1);
    }
  }, 120_000);
});
