/**
 * Shared breaker signals on the breaker's hot path and through Redis faults (real server, real
 * time): no call sends a Redis command, closed or open; while Redis is killed, stopped
 * (SIGSTOP) or flushed, calls go on deciding at once, the breaker opens and probes by itself,
 * the store's health is one event each way, and the state re-syncs once Redis is back.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokenCircuitError, CircuitBreaker, pipeline } from '../../../src/index.js';
import { type RedisBreakerSignals, sharedSignals } from '../../../src/redis/index.js';
import { sleep } from '../../support/async.js';
import { clientForEachTest, clients } from '../../support/redis-clients.js';
import { describeRedis, type RedisServer } from '../../support/redis-server.js';

/** Waits until `cond` holds; the limit only ends a test gone wrong (a busy machine is slow). */
async function until(cond: () => boolean, limitMs = 20_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > end) return false;
    await sleep(5);
  }
  return true;
}

/** Commands the server ran since the last CONFIG RESETSTAT, but for INFO and CONFIG. */
async function commandsRun(redis: RedisServer): Promise<Record<string, number>> {
  const text = String(await redis.command('INFO', 'commandstats'));
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (!/^(info|config)/.test(m[1]!)) out[m[1]!] = Number(m[2]);
  }
  return out;
}

describeRedis('shared breaker signals on the hot path and through faults', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    const client = clientForEachTest(redis, factory);
    let run = 0;
    const made: RedisBreakerSignals[] = [];
    afterEach(() => {
      for (const s of made.splice(0)) s.dispose();
    });

    function shared(options: { pollInterval: number; timeout?: number; breakDuration: number }) {
      const breaker = new CircuitBreaker({
        name: `faults-${factory.kind}-${++run}-${process.pid}`,
        window: { kind: 'consecutive', threshold: 1 },
        breakDuration: options.breakDuration,
      });
      const signals = sharedSignals(breaker, {
        client: client(),
        quorum: 1,
        pollInterval: options.pollInterval,
        timeout: options.timeout ?? 200,
        onWarning: () => {},
      });
      made.push(signals);
      return { breaker, signals, p: pipeline(breaker) };
    }

    it('0 Redis commands per call: 100,000 calls closed, then 100,000 refused while open (INFO commandstats)', async () => {
      const { breaker, signals, p } = shared({ pollInterval: 600_000, breakDuration: 600_000 });
      await signals.sync();
      // The subscriber connects and, ready, reads the state once.
      await until(() => signals.stats().roundTrips >= 2 || factory.kind === 'ioredis', 2_000);
      await sleep(100);
      await redis().command('CONFIG', 'RESETSTAT');
      for (let i = 0; i < 100_000; i++) p.executeSync(() => i);
      expect(await commandsRun(redis())).toEqual({});
      breaker.trip();
      await until(() => signals.sharedOpen);
      await redis().command('CONFIG', 'RESETSTAT');
      let refused = 0;
      for (let i = 0; i < 100_000; i++) {
        try {
          p.executeSync(() => i);
        } catch {
          refused++;
        }
      }
      expect(refused).toBe(100_000);
      expect(await commandsRun(redis())).toEqual({});
    });

    it('killed and restarted, stopped 3 s (SIGSTOP), SCRIPT FLUSH, FLUSHALL: calls never wait, the breaker decides alone, one store event each way, re-sync after', async () => {
      // The deadline is far above a reply's time on a busy machine (one that ran late would
      // flap the store's state) and below the stop.
      const { breaker, signals, p } = shared({
        pollInterval: 100,
        timeout: 1_000,
        breakDuration: 1_000,
      });
      const events: boolean[] = [];
      signals.onStoreStateChange((e) => events.push(e.available));
      await signals.sync();
      let slowest = 0;
      const times: number[] = [];
      let stop = false;
      let values = 0;
      let refused = 0;
      const lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      // Calls all along, a batch of 50 per millisecond.
      const load = (async () => {
        while (!stop) {
          for (let i = 0; i < 50; i++) {
            const t0 = performance.now();
            try {
              p.executeSync(() => i);
              values++;
            } catch (error) {
              // Refused while open; any other error (a call that had to wait) is counted apart.
              if (error instanceof BrokenCircuitError) refused++;
            }
            const ms = performance.now() - t0;
            times.push(ms);
            if (ms > slowest) slowest = ms;
          }
          await sleep(1);
        }
      })();
      const p99 = (from: number) => {
        const sorted = times.slice(from).sort((a, b) => a - b);
        return sorted[Math.floor(sorted.length * 0.99)]!;
      };
      await sleep(300);
      const baseline = p99(0);
      const faultsFrom = times.length;

      // Killed: the breaker opens, and after its break the load's next call probes without a
      // lease and closes it, as a local breaker's would.
      await redis().kill();
      breaker.trip();
      expect(breaker.state).toBe('open');
      expect(await until(() => !signals.storeAvailable)).toBe(true);
      expect(await until(() => breaker.state === 'closed')).toBe(true);
      expect(signals.stats().leasesGranted).toBe(0);
      breaker.trip();
      await redis().restart();
      expect(await until(() => signals.storeAvailable)).toBe(true);
      // Its break, unreported while Redis was away, reaches Redis once it is back.
      expect(await until(() => signals.sharedOpen)).toBe(true);
      expect(events).toEqual([false, true]);

      // Stopped for 3 s, and until a poll has run past its deadline.
      await until(() => breaker.state !== 'open');
      redis().pause();
      await sleep(3_000);
      expect(await until(() => !signals.storeAvailable)).toBe(true);
      redis().resume();
      expect(await until(() => signals.storeAvailable)).toBe(true);
      expect(events).toEqual([false, true, false, true]);

      // Scripts flushed, then everything: no operation fails.
      const failures = signals.stats().storeFailures;
      await redis().command('SCRIPT', 'FLUSH');
      await sleep(300);
      await redis().command('FLUSHALL');
      await sleep(300);
      await until(() => breaker.state === 'closed');
      breaker.trip();
      expect(await until(() => signals.sharedOpen)).toBe(true);
      expect(signals.stats().storeFailures).toBe(failures);
      expect(events).toEqual([false, true, false, true]);
      stop = true;
      await load;
      lag.disable();
      const maxLag = lag.max / 1e6;
      const withFaults = p99(faultsFrom);
      console.log(
        `${factory.kind}: call p99 ${(baseline * 1e3).toFixed(1)} us before the faults, ${(withFaults * 1e3).toFixed(1)} us during them; slowest call ${slowest.toFixed(2)} ms over ${times.length} calls; event loop up to ${maxLag.toFixed(1)} ms late`,
      );
      // Every call was decided synchronously: a value or a refusal, never a call that had to
      // wait (executeSync refuses those).
      expect(values + refused).toBe(times.length);
      expect(refused).toBeGreaterThan(0);
      // A synchronous call holds the event loop: the slowest is the machine (a descheduled
      // process, a GC), and shows as event-loop lag too, never as the 3 s stop.
      expect(slowest).toBeLessThanOrEqual(Math.max(50, maxLag + 10));
      expect(slowest).toBeLessThan(3_000);
    }, 120_000);
  });
});
