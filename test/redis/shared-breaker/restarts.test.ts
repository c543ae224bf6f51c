/**
 * Shared breaker signals and instances that crash and restart, in real processes on a real
 * Redis server, with the BUILT package: one failing instance, however often it restarts, never
 * makes a quorum alone, whether its identity survives the restart (a host and PM2 slot) or is
 * new each time (a runtime without `node:os`).
 */
import { expect, it } from 'vitest';
import { sleep } from '../../support/async.js';
import { describeRedis } from '../../support/redis-server.js';
import {
  ask,
  isReady,
  opened,
  READY_LIMIT_MS,
  sharedBreakerProcesses,
} from '../../support/shared-breaker.js';

const spawn = sharedBreakerProcesses();

describeRedis('shared breaker signals across restarts', (redis) => {
  it.each([
    ['an identity that survives a restart (host and PM2 slot)', {}],
    ['a new random identity at each start (no node:os)', { noOs: true }],
  ])(
    'quorum 2: one instance that fails, crashes and restarts 4 times opens none of 5 healthy instances, with %s',
    async (_, identity) => {
      const pollInterval = 300;
      const timeout = 2_000;
      // How long a heartbeat keeps an instance live: 3 × (pollInterval + timeout).
      const liveMs = 3 * (pollInterval + timeout);
      const name = `restarts-${process.pid}-${Date.now()}`;
      const options = { quorum: 2, breakDuration: 30_000, pollInterval, timeout, ...identity };
      const port = redis().port;
      const healthy = Array.from({ length: 5 }, (_, i) =>
        spawn(port, name, '-', i % 2 === 0 ? 'ioredis' : 'node-redis', { ...options, slot: i }),
      );
      await Promise.all(healthy.map((c) => c.next(isReady, READY_LIMIT_MS)));
      const ids = new Set<unknown>();
      for (let run = 0; run < 5; run++) {
        const bad = spawn(port, name, '-', run % 2 === 0 ? 'ioredis' : 'node-redis', {
          ...options,
          slot: 5,
        });
        ids.add((await bad.next(isReady, READY_LIMIT_MS)).instance);
        // The last one lives longer than its liveness window before it fails: by then its
        // earlier selves stopped counting, and its own report counts.
        if (run === 4) await sleep(liveMs + pollInterval);
        await ask(bad, 'fail', 'reported');
        bad.send({ cmd: 'crash' });
        await bad.exited;
      }
      // Every healthy instance reads the shared state, as its poll does.
      const synced = await Promise.all(healthy.map((c) => ask(c, 'sync', 'synced')));
      const remaining = synced.map(
        (m) => (m.stats as { sharedOpenRemaining: number }).sharedOpenRemaining,
      );
      const openedHealthy = healthy.filter((c) => c.messages.some(opened)).length;
      console.log(
        `${ids.size} identities over 5 runs of the failing instance; ${openedHealthy} of 5 healthy instances opened, shared open for ${Math.round(Math.max(...remaining))} ms more`,
      );
      expect(openedHealthy).toBe(0);
      expect(synced.map((m) => m.state)).toEqual(Array.from({ length: 5 }, () => 'closed'));
      expect(Math.max(...remaining)).toBe(0);
    },
    300_000,
  );
});
