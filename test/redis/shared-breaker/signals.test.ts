/**
 * Shared breaker signals on a real Redis server, several instances in one process (each a
 * breaker with signals of its own instance id, as separate processes would have): quorum,
 * shared open by pub/sub and by poll, probe leases with fencing tokens, Redis keys and
 * commands, and the breaker deciding alone when Redis does not answer. Breakers run on a
 * ManualClock; Redis keeps its own time.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  type CircuitBreakerOptions,
  pipeline,
  systemClock,
} from '../../../src/index.js';
import {
  LEASE_SCRIPT,
  OUTCOME_SCRIPT,
  REPORT_SCRIPT,
  type RedisBreakerSignals,
  type SharedSignalsOptions,
  SYNC_SCRIPT,
  sharedSignals,
  WITHDRAW_SCRIPT,
} from '../../../src/redis/index.js';
import { LEASE, OUTCOME, REPORT, SYNC, WITHDRAW } from '../../../src/redis/shared-breaker/shas.js';
import { ManualClock } from '../../../src/testing/index.js';
import { sleep } from '../../support/async.js';
import { boom, fail, refusal, succeed } from '../../support/breaker.js';
import { clientForEachTest, clients } from '../../support/redis-clients.js';
import { describeRedis } from '../../support/redis-server.js';

/**
 * Waits (real time, 5 ms steps) until `cond` holds or `limitMs` passed; says whether it held.
 * The limit only ends a test that went wrong: a busy machine may take seconds.
 */
async function until(cond: () => boolean, limitMs = 10_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > end) return false;
    await sleep(5);
  }
  return true;
}

it('each script SHA1 is the SHA1 of its text', () => {
  const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
  expect(REPORT.sha).toBe(sha1(REPORT_SCRIPT));
  expect(WITHDRAW.sha).toBe(sha1(WITHDRAW_SCRIPT));
  expect(LEASE.sha).toBe(sha1(LEASE_SCRIPT));
  expect(OUTCOME.sha).toBe(sha1(OUTCOME_SCRIPT));
  expect(SYNC.sha).toBe(sha1(SYNC_SCRIPT));
});

describeRedis('shared breaker signals', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    const client = clientForEachTest(redis, factory);
    let run = 0;
    const made: RedisBreakerSignals[] = [];
    afterEach(() => {
      for (const s of made.splice(0)) s.dispose();
    });

    /** `n` instances of one shared breaker name, on one ManualClock. */
    function instances(
      n: number,
      options: Partial<SharedSignalsOptions> | ((i: number) => Partial<SharedSignalsOptions>) = {},
      breakerOptions: CircuitBreakerOptions = {},
    ) {
      const clock = new ManualClock();
      const name = `shared-${factory.kind}-${++run}-${process.pid}`;
      return {
        clock,
        name,
        list: Array.from({ length: n }, (_, i) => {
          const breaker = new CircuitBreaker({
            name,
            clock,
            window: { kind: 'consecutive', threshold: 1 },
            breakDuration: 60_000,
            ...breakerOptions,
          });
          const signals = sharedSignals(breaker, {
            client: client(),
            instance: `i${i}`,
            // Deadlines and polls in real time: advancing the breakers' clock must not expire
            // the operations Redis is answering.
            clock: systemClock,
            // Far above a reply's time on a busy machine: these tests are not about deadlines.
            timeout: 5_000,
            onWarning: () => {},
            ...(typeof options === 'function' ? options(i) : options),
          });
          made.push(signals);
          return { breaker, signals, p: pipeline(breaker) };
        }),
      };
    }

    /**
     * Resolves once every instance's subscription receives messages, and what the instances
     * read when their subscriber became ready has arrived: nothing learnt later can race a test.
     */
    async function subscribed(list: readonly { signals: RedisBreakerSignals }[]): Promise<void> {
      while (list.some((x) => x.signals.stats().messages === 0)) {
        await redis().command('PUBLISH', list[0]!.signals.keys.channel, 'ping');
        await sleep(20);
      }
      await Promise.all(list.map((x) => x.signals.sync()));
    }

    it('quorum 2: one instance opening leaves the others closed; a second opens all of them, by pub/sub', async () => {
      // No poll during the test: the shared open can only come by pub/sub.
      const { list } = instances(4, { quorum: 2, pollInterval: 600_000 });
      await subscribed(list);
      fail(list[0]!.p);
      expect(list[0]!.breaker.state).toBe('open');
      await until(() => list[0]!.signals.stats().reports === 1);
      await sleep(50);
      expect(list.slice(1).map((x) => x.breaker.state)).toEqual(['closed', 'closed', 'closed']);
      fail(list[1]!.p);
      expect(await until(() => list.every((x) => x.breaker.state === 'open'))).toBe(true);
      expect(list[2]!.signals.sharedOpen).toBe(true);
      expect(list[3]!.signals.stats().heldOpen).toBe(1);
      const error = refusal(list[3]!.p) as { name: string; retryAfter: number };
      expect(error.name).toBe('BrokenCircuitError');
      expect(error.retryAfter).toBeGreaterThan(59_000);
    });

    it('a report counts only while its instance heartbeats: one that stopped (disposed, or killed) no longer makes a quorum with the next', async () => {
      const pollInterval = 100;
      const timeout = 200;
      const { list } = instances(2, { quorum: 2, pollInterval, timeout, subscriber: false });
      await Promise.all(list.map((x) => x.signals.sync()));
      fail(list[0]!.p);
      expect(await until(() => list[0]!.signals.stats().reports === 1)).toBe(true);
      list[0]!.signals.dispose();
      // Its heartbeat lasts 3 × (pollInterval + timeout); its report, the whole break (60 s).
      await sleep(3 * (pollInterval + timeout) + 100);
      fail(list[1]!.p);
      expect(await until(() => list[1]!.signals.stats().reports === 1)).toBe(true);
      await list[1]!.signals.sync();
      expect(list[1]!.signals.sharedOpen).toBe(false);
    });

    it('without pub/sub (subscriber: false), an instance learns of the shared open at its next poll', async () => {
      const { list } = instances(3, { quorum: 2, subscriber: false, pollInterval: 600_000 });
      fail(list[0]!.p);
      fail(list[1]!.p);
      await until(() => list[0]!.signals.stats().reports + list[1]!.signals.stats().reports === 2);
      await sleep(20);
      expect(list[2]!.breaker.state).toBe('closed');
      await list[2]!.signals.sync();
      expect(list[2]!.breaker.state).toBe('open');
      expect(list[2]!.signals.stats().messages).toBe(0);
    });

    it('a share quorum counts the instances alive: 0.5 of 4 needs 2 reports', async () => {
      const { list } = instances(4, { quorum: { share: 0.5, min: 1 }, subscriber: false });
      await Promise.all(list.map((x) => x.signals.sync()));
      fail(list[0]!.p);
      await until(() => list[0]!.signals.stats().reports === 1);
      await list[3]!.signals.sync();
      expect(list[3]!.breaker.state).toBe('closed');
      fail(list[1]!.p);
      await until(() => list[1]!.signals.stats().reports === 1);
      await list[3]!.signals.sync();
      expect(list[3]!.breaker.state).toBe('open');
    });

    it('half-open probes are leased: one instance probes, the others refuse; its success lets them probe for themselves', async () => {
      // No poll during the test: each instance learns of the lease by asking for it.
      const { list, clock } = instances(3, { quorum: 5, pollInterval: 600_000 });
      await subscribed(list);
      for (const x of list) fail(x.p);
      await until(() => list.every((x) => x.signals.stats().reports === 1));
      clock.advance(60_000);
      expect(list.map((x) => x.breaker.state)).toEqual(['half-open', 'half-open', 'half-open']);
      // The first call asks for the lease and is refused meanwhile.
      refusal(list[0]!.p);
      expect(await until(() => list[0]!.signals.stats().leasesGranted === 1)).toBe(true);
      for (const x of list.slice(1)) {
        refusal(x.p);
        expect(await until(() => x.signals.stats().leasesRefused === 1)).toBe(true);
      }
      const trips = list.map((x) => x.signals.stats().roundTrips);
      refusal(list[1]!.p);
      refusal(list[2]!.p);
      // Refused again without asking again: it knows who holds the lease until when.
      expect(list.map((x) => x.signals.stats().roundTrips)).toEqual(trips);
      // The holder probes; its success closes it and is published.
      const messages = list.map((x) => x.signals.stats().messages);
      succeed(list[0]!.p);
      expect(list[0]!.breaker.state).toBe('closed');
      expect(await until(() => list[0]!.signals.stats().outcomes === 1)).toBe(true);
      for (const i of [1, 2]) {
        expect(await until(() => list[i]!.signals.stats().messages > messages[i]!)).toBe(true);
      }
      succeed(list[1]!.p);
      succeed(list[2]!.p);
      expect(list.map((x) => x.breaker.state)).toEqual(['closed', 'closed', 'closed']);
    });

    it('a failed leased probe re-opens the half-open instances for another break', async () => {
      const { list, clock } = instances(2, { quorum: 5 });
      await subscribed(list);
      for (const x of list) fail(x.p);
      await until(() => list.every((x) => x.signals.stats().reports === 1));
      clock.advance(60_000);
      refusal(list[0]!.p);
      expect(await until(() => list[0]!.signals.stats().leasesGranted === 1)).toBe(true);
      fail(list[0]!.p);
      expect(list[0]!.breaker.state).toBe('open');
      expect(await until(() => list[1]!.breaker.state === 'open')).toBe(true);
      expect(list[0]!.signals.stats().outcomes).toBe(1);
    });

    it('a probe outcome after its lease ran out is ignored (fencing token)', async () => {
      // i0's lease lasts 1 s (Redis time), i1's a minute.
      const { list, clock, name } = instances(2, (i) => ({
        quorum: 5,
        probeLease: i === 0 ? 1_000 : 60_000,
        timeout: 1_000,
      }));
      const probeKey = `breakwater:breaker:{${name}}:probe`;
      for (const x of list) fail(x.p);
      await until(() => list.every((x) => x.signals.stats().reports === 1));
      clock.advance(60_000);
      refusal(list[0]!.p);
      await until(() => list[0]!.signals.stats().leasesGranted === 1);
      // The probe starts, and outlives its lease (Redis time).
      let finish: (v: string) => void = () => {};
      const probe = list[0]!.p.execute(() => new Promise<string>((r) => (finish = r)));
      let gone = false;
      while (!gone) {
        await sleep(50);
        gone = (await redis().command('GET', probeKey)) === null;
      }
      // As much time for the breakers: a poll that saw i0's lease made i1 wait out its rest.
      clock.advance(1_000);
      refusal(list[1]!.p);
      expect(await until(() => list[1]!.signals.stats().leasesGranted === 1)).toBe(true);
      const held = await redis().command('GET', probeKey);
      expect(String(held)).toMatch(/^i1#\S+ \d+$/);
      finish('ok');
      await probe;
      await until(() => list[0]!.signals.stats().staleOutcomes === 1);
      // The stale success changed nothing shared: i1 still holds its lease.
      expect(await redis().command('GET', probeKey)).toBe(held);
      expect(list[1]!.breaker.state).toBe('half-open');
      // Tokens strictly increase.
      const tokens = [String(held).split(' ')[1]];
      expect(Number(tokens[0])).toBeGreaterThan(0);
    });

    it('every key it writes has a TTL; it sends no KEYS or SCAN', async () => {
      await redis().command('CONFIG', 'RESETSTAT');
      const { list, clock, name } = instances(3, { quorum: { share: 0.5, min: 2 } });
      await Promise.all(list.map((x) => x.signals.sync()));
      // One report (no quorum), then a lease and its fence (the probe key goes when the
      // shared open holds the lease's breaker open: the lease is given back).
      fail(list[0]!.p);
      await until(() => list[0]!.signals.stats().reports === 1);
      clock.advance(60_000);
      refusal(list[0]!.p);
      await until(() => list[0]!.signals.stats().leasesGranted === 1);
      // Then the quorum: the shared state.
      fail(list[1]!.p);
      fail(list[2]!.p);
      await until(() => list.every((x) => x.signals.sharedOpen));
      const stats = String(await redis().command('INFO', 'commandstats'));
      expect(stats).not.toMatch(/cmdstat_(keys|scan):/);
      const keys = (await redis().command('KEYS', `breakwater:breaker:{${name}}:*`)) as string[];
      expect(keys.map((k) => k.split(':').pop()).sort()).toEqual([
        'fence',
        'joined',
        'live',
        'reports',
        'state',
      ]);
      for (const key of keys) {
        expect(Number(await redis().command('PTTL', key)), key).toBeGreaterThan(0);
      }
    });

    it('SCRIPT FLUSH: the next operation loads its script again and succeeds', async () => {
      const { list } = instances(2, { quorum: 2, subscriber: false });
      await list[0]!.signals.sync();
      expect(await redis().command('SCRIPT', 'FLUSH')).toBe('OK');
      fail(list[0]!.p);
      fail(list[1]!.p);
      expect(await until(() => list[0]!.signals.sharedOpen || list[1]!.signals.sharedOpen)).toBe(
        true,
      );
      expect(list.every((x) => x.signals.stats().storeFailures === 0)).toBe(true);
    });

    it('Redis down: the breaker decides alone (probes without a lease), the store is unavailable (an event), and re-syncs its break once Redis is back', async () => {
      const { list, clock, name } = instances(1, { quorum: 1, subscriber: false, timeout: 100 });
      const x = list[0]!;
      const events: boolean[] = [];
      x.signals.onStoreStateChange((e) => events.push(e.available));
      await x.signals.sync();
      await redis().kill();
      fail(x.p);
      expect(x.breaker.state).toBe('open');
      expect(await until(() => !x.signals.storeAvailable)).toBe(true);
      clock.advance(60_000);
      expect(x.breaker.state).toBe('half-open');
      // A probe without a lease: exactly as a local breaker.
      await expect(x.p.execute(() => Promise.reject(boom))).rejects.toBe(boom);
      expect(x.breaker.state).toBe('open');
      await redis().restart();
      for (let i = 0; i < 100 && !x.signals.storeAvailable; i++) {
        await x.signals.sync();
        await sleep(20);
      }
      expect(x.signals.storeAvailable).toBe(true);
      expect(events).toEqual([false, true]);
      // The break it could not report is reported now: quorum 1 opens the shared state.
      expect(await until(() => x.signals.sharedOpen)).toBe(true);
      expect(
        Number(await redis().command('PTTL', `breakwater:breaker:{${name}}:state`)),
      ).toBeGreaterThan(0);
    });
  });
});
