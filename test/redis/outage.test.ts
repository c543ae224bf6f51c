/**
 * RedisGcraStore when Redis misbehaves (real server, real time): killed and restarted empty,
 * paused, or answering while the event loop is blocked. Decisions must end by their deadline
 * with a store error, never hang, never leave an unhandled rejection, and work again once
 * Redis is back.
 */
import { describe, expect, it } from 'vitest';
import {
  RedisGcraStore,
  StoreError,
  StoreTimeoutError,
  StoreUnavailableError,
} from '../../src/redis/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { macrotask, sleep } from '../support/async.js';
import { clientForEachTest, clients } from '../support/redis-clients.js';
import { describeRedis, sendCommand } from '../support/redis-server.js';

/** Slack over the deadline for a loaded machine: timers fire late, not early. */
const SLACK_MS = 20;

interface Outcome {
  readonly ok: boolean;
  readonly error?: unknown;
  readonly startedAt: number;
  readonly ms: number;
  /**
   * How late a plain `setTimeout(timeout)` started with the call, followed by two turns of
   * the event loop, ended (or, when it had not ended when the call settled, how far past due
   * it was): time the process itself could not run timers, from a loaded machine, which no
   * deadline can beat. The two turns: the store expires a late deadline one turn after its
   * timer fired (to read replies that arrived meanwhile), and its timer may be due a moment
   * after this one; the process can be descheduled in either.
   */
  readonly stalledMs: number;
}

/** Runs `start` and records how and when its promise settled, timed from before the call. */
function timed(start: () => Promise<unknown>, timeout: number): Promise<Outcome> {
  const startedAt = performance.now();
  let firedAt: number | undefined;
  let reference = setTimeout(() => {
    reference = setTimeout(() => {
      reference = setTimeout(() => {
        firedAt = performance.now();
      }, 0);
    }, 0);
  }, timeout);
  const outcome = (ok: boolean, error?: unknown): Outcome => {
    clearTimeout(reference);
    const now = performance.now();
    const due = startedAt + timeout;
    return {
      ok,
      error,
      startedAt,
      ms: now - startedAt,
      stalledMs: Math.max(0, (firedAt ?? now) - due),
    };
  };
  return start().then(
    () => outcome(true),
    (error: unknown) => outcome(false, error),
  );
}

/** A PING to the server: when it was sent and how long its answer took, in ms. */
interface Probe {
  readonly sentAt: number;
  readonly ms: number;
}

/**
 * PINGs the server on `port`, one after another on fresh connections, until `running()` is
 * false or the server stops answering: how late the server (another process, on a busy machine
 * descheduled like any other) was answering anyone at each moment.
 */
async function probeServer(port: number, running: () => boolean, probes: Probe[]): Promise<void> {
  while (running()) {
    const sentAt = performance.now();
    try {
      await sendCommand(port, ['PING']);
    } catch {
      return;
    }
    probes.push({ sentAt, ms: performance.now() - sentAt });
    await sleep(2);
  }
}

/** Blocks the event loop (the whole thread) for `ms`. */
function block(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describeRedis('RedisGcraStore when Redis fails', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    const client = clientForEachTest(redis, factory);
    let run = 0;

    it('killed and restarted empty: decisions meanwhile reject with a store error by their deadline, then succeed again within 2 s', async () => {
      const timeout = 50;
      const store = new RedisGcraStore({
        client: client(),
        name: `outage-${factory.kind}-${++run}`,
        timeout,
        onWarning: () => {},
      });
      const outcomes: Outcome[] = [];
      let killedAt = Number.POSITIVE_INFINITY;
      let answeringAt = Number.POSITIVE_INFINITY;
      let recovered = false;
      let stop = false;
      // 10 loops deciding through the whole outage, 2 ms apart (not flat out: a saturated
      // event loop delays every timer, the store's included).
      const loops = Array.from({ length: 10 }, async (_, n) => {
        while (!stop) {
          const outcome = await timed(() => store.decide(`k${n}`, 1, 1_000, 1_000), timeout);
          outcomes.push(outcome);
          if (outcome.ok && outcome.startedAt > answeringAt) recovered = true;
          await sleep(2);
        }
      });

      const probes: Probe[] = [];
      const probing = probeServer(
        redis().port,
        () => killedAt === Number.POSITIVE_INFINITY,
        probes,
      );
      await sleep(100);
      killedAt = performance.now();
      await probing;
      await redis().kill();
      await sleep(300);
      await redis().restart();
      answeringAt = performance.now();
      const limit = answeringAt + 2_000;
      while (!recovered && performance.now() < limit) await sleep(5);
      const recoveredAfter = performance.now() - answeringAt;
      await sleep(100);
      stop = true;
      await Promise.all(loops);

      expect(recovered, 'a decision succeeded within 2 s of Redis answering again').toBe(true);
      expect(recoveredAfter).toBeLessThan(2_000);
      const failures = outcomes.filter((o) => !o.ok);
      expect(failures.length).toBeGreaterThan(0);
      for (const failure of failures) {
        expect(failure.error).toBeInstanceOf(StoreError);
        expect(
          failure.error instanceof StoreTimeoutError ||
            failure.error instanceof StoreUnavailableError,
        ).toBe(true);
        expect(failure.ms).toBeLessThanOrEqual(timeout + SLACK_MS + failure.stalledMs);
      }
      // Failures only around the outage: none well before the kill, unless the process itself
      // was stalled past that decision's deadline, or the server was: a PING during the
      // decision took most of its deadline (at a load average of 15, six decisions timed out
      // before the kill with this process on time).
      const serverLate = (o: Outcome) =>
        probes.some(
          (p) =>
            p.sentAt < o.startedAt + o.ms &&
            p.sentAt + p.ms > o.startedAt &&
            p.ms >= timeout - SLACK_MS,
        );
      const early = failures.filter(
        (o) => o.startedAt + o.ms < killedAt - timeout && o.stalledMs < SLACK_MS && !serverLate(o),
      );
      expect(
        early.map((o) => ({ at: o.startedAt - killedAt, ms: o.ms, error: String(o.error) })),
      ).toEqual([]);
      // Steady again: the last decisions of every loop succeeded.
      const lastStart = Math.max(...outcomes.map((o) => o.startedAt));
      expect(outcomes.filter((o) => o.startedAt > lastStart - 50).every((o) => o.ok)).toBe(true);
      expect(outcomes.filter((o) => o.ok && o.startedAt > answeringAt).length).toBeGreaterThan(10);
      expect(store.pending).toBe(0);
    });

    it('CLIENT PAUSE 200 ms: decisions reject with StoreTimeoutError at their deadline, not when the pause ends', async () => {
      const timeout = 30;
      const store = new RedisGcraStore({
        client: client(),
        name: `pause-${factory.kind}-${++run}`,
        timeout,
        onWarning: () => {},
      });
      await store.load();
      expect((await store.decide('k', 1, 1_000, 1_000)).allowed).toBe(true);
      expect(await redis().command('CLIENT', 'PAUSE', 200)).toBe('OK');
      const pausedAt = performance.now();
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () => timed(() => store.decide('k', 1, 1_000, 1_000), timeout)),
      );
      for (const outcome of outcomes) {
        expect(outcome.ok).toBe(false);
        expect(outcome.error).toBeInstanceOf(StoreTimeoutError);
        expect((outcome.error as StoreTimeoutError).timeout).toBe(timeout);
        expect(outcome.ms).toBeGreaterThanOrEqual(timeout - 1);
        expect(outcome.ms).toBeLessThanOrEqual(timeout + SLACK_MS + outcome.stalledMs);
      }
      // Well before the pause ends, unless this process was itself stalled that long.
      const stalled = Math.max(...outcomes.map((o) => o.stalledMs));
      expect(performance.now() - pausedAt).toBeLessThan(150 + stalled);
      // The late replies come after the pause and are ignored; the store decides again.
      await sleep(250);
      expect((await store.decide('k', 1, 1_000, 1_000)).allowed).toBe(true);
      expect(store.pending).toBe(0);
    });

    it('serves any number of in-flight decisions with one timer, and ignores their late replies', async () => {
      const clock = new ManualClock();
      const store = new RedisGcraStore({
        client: client(),
        name: `timer-${factory.kind}-${++run}`,
        timeout: 30,
        clock,
        onWarning: () => {},
      });
      await store.load();
      expect(await redis().command('CLIENT', 'PAUSE', 100)).toBe('OK');
      const intervalUs = 10_000_000;
      const outcomes = Array.from({ length: 100 }, () =>
        timed(() => store.decide('k', 1, intervalUs, 1_000), 30),
      );
      expect(store.pending).toBe(100);
      expect(clock.pendingTimers).toBe(1);
      clock.advance(29);
      expect(store.pending).toBe(100);
      clock.advance(1);
      expect(store.pending).toBe(0);
      for (const outcome of await Promise.all(outcomes)) {
        expect(outcome.error).toBeInstanceOf(StoreTimeoutError);
      }
      // The server runs the 100 commands when the pause ends (Redis checks it every 100 ms);
      // the store ignores their replies.
      await sleep(250);
      const next = await store.decide('k', 1, intervalUs, 1_000);
      expect(next.allowed).toBe(true);
      // The timed-out decisions were applied on the server all the same (documented).
      expect(next.remaining).toBe(1_000 - 101);
      expect(clock.pendingTimers).toBeLessThanOrEqual(1);
    });

    it('a blocked event loop does not time out decisions whose replies arrived during the block', async () => {
      const store = new RedisGcraStore({
        client: client(),
        name: `stall-${factory.kind}-${++run}`,
        timeout: 10,
        onWarning: () => {},
      });
      await store.load();
      const outcomes = Array.from({ length: 10 }, () =>
        timed(() => store.decide('k', 1, 1_000, 1_000), 10),
      );
      // Let the client write the commands (node-redis writes in setImmediate), then block
      // for four times the timeout while Redis answers.
      await macrotask();
      block(40);
      for (const outcome of await Promise.all(outcomes)) {
        expect(outcome.error).toBeUndefined();
        expect(outcome.ok).toBe(true);
      }
    });

    it('a decision made while disconnected fails at once with StoreUnavailableError', async () => {
      const store = new RedisGcraStore({
        client: client(),
        name: `closed-${factory.kind}-${++run}`,
        timeout: 1_000,
        onWarning: () => {},
      });
      await redis().kill();
      await sleep(50);
      const outcome = await timed(() => store.decide('k', 1, 1_000, 10), 1_000);
      // At once: the client's refusal, not the 1 s deadline (which ends in StoreTimeoutError).
      expect(outcome.error).toBeInstanceOf(StoreUnavailableError);
      expect((outcome.error as StoreUnavailableError).cause).toBeInstanceOf(Error);
      expect(outcome.ms).toBeLessThan(1_000 + outcome.stalledMs);
      await redis().restart();
    });
  });
});
