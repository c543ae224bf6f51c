import { afterEach } from 'vitest';
import {
  adaptiveLimit,
  bulkhead,
  chaos,
  circuitBreaker,
  coalesce,
  hedge,
  loadShedder,
  pipeline,
  Registry,
  rateLimiter,
  retry,
  retryBudget,
  timeout,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { untilAborted } from '../support/async.js';

export interface Scenario {
  readonly clock: ManualClock;
  readonly registry: Registry;
  /** Ends the two bulkhead calls still in flight (150 ms after they started). */
  finish(): Promise<void>;
}

/**
 * `runScenario` for the tests of the calling file: after each test, the scenario it ran is
 * finished and its registry disposed.
 */
export function useScenario(): () => Promise<Scenario> {
  let current: Scenario | undefined;
  afterEach(async () => {
    await current?.finish();
    current?.registry.dispose();
    current = undefined;
  });
  return async () => {
    current = await runScenario();
    return current;
  };
}

/**
 * A registry with one named instance of each kind, driven through a known sequence of calls on
 * a ManualClock. The figures every exporter must show (see the tests):
 * - breaker `payments` (latency on): a 3 ms success, two 20 ms failures that open it
 *   (consecutive threshold 2), one call refused while open.
 * - bulkhead `db` (max 2, queue 1, queue timeout 50 ms, latency on): two calls in flight, one
 *   refused as full, one queued that times out; `finish()` ends the two after 150 ms.
 * - rate limiter `search` (2 per second): 2 admitted, 1 refused.
 * - retry `pay-retry` (3 attempts): one call failing every time: 2 retries, 1 give-up.
 * - retry budget `pay-budget` (tokens, 10), spent by `pay-retry`: 1 call, 2 retries allowed,
 *   7 tokens left.
 * - timeout `report` (100 ms): one call timed out.
 * - load shedder `api-shed` (no low-traffic floor, random 0.4): one call let through that
 *   fails, then one refused (judged at (1 - 0) / 2 = 0.5; refusal rate 2/3 after it).
 * - adaptive limit `api-limit` (initial limit 1, windows of 1 ms and one call): a 20 ms call
 *   that ends the first window (latency 20 ms, the baseline too: no queue, so the limit grows
 *   to 2), and one call refused while it ran.
 * - hedge `fetch-hedge` (delay 10 ms): one call whose first attempt answers after 30 ms and
 *   whose hedge, started at 10 ms, after 5 ms: 1 call, 1 hedge, won by the hedge.
 * - coalescer `user-load`: three calls of key `u1`, one of which leaves (its signal aborts),
 *   and one of key `u2` whose only caller leaves: 4 calls, 2 flights, 2 coalesced, 1
 *   abandoned, none in flight after.
 * - chaos step `api-chaos` (fault, rate 0.5, draws 0.1, 0.9, 0.2, 0.7): 4 calls, 2 faults
 *   injected, 2 let through of which 1 fails (a real failure).
 */
export async function runScenario(): Promise<Scenario> {
  const clock = new ManualClock();
  const registry = new Registry({}, { clock });
  const breaker = circuitBreaker({
    name: 'payments',
    window: { kind: 'consecutive', threshold: 2 },
    breakDuration: 10_000,
    metrics: { latency: true },
    clock,
  });
  const db = bulkhead({
    name: 'db',
    maxConcurrent: 2,
    maxQueue: 1,
    queueTimeout: 50,
    metrics: { latency: true },
    clock,
  });
  registry.register('payments', breaker);
  registry.register('db', db);
  registry.register('search', rateLimiter({ name: 'search', limit: 2, period: 1_000, clock }));
  const budget = retryBudget({ name: 'pay-budget', model: 'tokens', clock });
  registry.register('pay-budget', budget);
  registry.register(
    'pay-retry',
    retry({
      budget,
      name: 'pay-retry',
      maxAttempts: 3,
      delay: 10,
      backoff: 'constant',
      jitter: 'none',
      clock,
    }),
  );
  registry.register('report', timeout({ name: 'report', timeout: 100, clock }));
  const shed = loadShedder({ name: 'api-shed', minRequests: 0, random: () => 0.4, clock });
  registry.register('api-shed', shed);
  const fetchHedge = hedge({ name: 'fetch-hedge', delay: 10, clock });
  registry.register('fetch-hedge', fetchHedge);

  const p = pipeline(breaker);
  const took = (ms: number, fail: boolean) => () => {
    clock.advance(ms);
    if (fail) throw new Error('down');
    return 'ok';
  };
  await p.tryExecute(took(3, false));
  await p.tryExecute(took(20, true));
  await p.tryExecute(took(20, true));
  await p.tryExecute(took(1, false));

  const t = pipeline(registry.timeout('report')).tryExecute(untilAborted);
  await clock.advanceAsync(100);
  await t;

  const bh = pipeline(db);
  const started = clock.now();
  const releases: (() => void)[] = [];
  const held = [0, 1].map(() =>
    bh.tryExecute(() => new Promise<void>((resolve) => releases.push(resolve))),
  );
  const queued = bh.tryExecute(() => 'queued');
  const full = await bh.tryExecute(() => 'full');
  if (full.ok) throw new Error('The bulkhead should have refused the fourth call');
  await clock.advanceAsync(50);
  if ((await queued).ok) throw new Error('The queued call should have timed out');

  const rl = pipeline(registry.rateLimiter('search'));
  for (let i = 0; i < 3; i++) await rl.tryExecute(() => i);

  const r = pipeline(registry.retry('pay-retry')).tryExecute(() => {
    throw new Error('always');
  });
  await clock.runAll();
  await r;

  const sp = pipeline(shed);
  await sp.tryExecute(() => Promise.reject(new Error('overloaded')));
  if ((await sp.tryExecute(() => 'shed')).ok) throw new Error('The shedder should have refused');
  const limit = adaptiveLimit({
    name: 'api-limit',
    initialLimit: 1,
    minSamples: 1,
    minWindow: 1,
    clock,
  });
  registry.register('api-limit', limit);
  const lp = pipeline(limit);
  const first = lp.tryExecute(() => new Promise((resolve) => clock.setTimer(() => resolve(1), 20)));
  if ((await lp.tryExecute(() => 'full')).ok) throw new Error('The limit should have refused');
  await clock.advanceAsync(20);
  await first;
  if (limit.limit !== 2) throw new Error('The limit should have grown to 2');

  const hedged = pipeline(fetchHedge).tryExecute(
    ({ hedge: n }) =>
      new Promise<string>((resolve) => clock.setTimer(() => resolve('ok'), n === 0 ? 30 : 5)),
  );
  await clock.runAll();
  await hedged;

  const users = coalesce({ name: 'user-load' });
  registry.register('user-load', users);
  const cp = pipeline(users);
  const leave = [new AbortController(), new AbortController()];
  const shared = [
    cp.tryExecute(() => new Promise((resolve) => clock.setTimer(() => resolve('u1'), 5)), {
      key: 'u1',
    }),
    cp.tryExecute(() => 'unused', { key: 'u1' }),
    cp.tryExecute(() => 'unused', { key: 'u1', signal: leave[0]!.signal }),
    cp.tryExecute(untilAborted, { key: 'u2', signal: leave[1]!.signal }),
  ];
  for (const ac of leave) ac.abort(new Error('left'));
  await clock.runAll();
  await Promise.all(shared);

  const draws = [0.1, 0.9, 0.2, 0.7];
  const apiChaos = chaos({
    name: 'api-chaos',
    strategy: 'fault',
    rate: 0.5,
    enabled: true,
    random: () => draws.shift() ?? 1,
    clock,
  });
  registry.register('api-chaos', apiChaos);
  const xp = pipeline(apiChaos);
  for (const fail of [false, true, false, false]) {
    await xp.tryExecute(() => (fail ? Promise.reject(new Error('down')) : 'ok'));
  }

  return {
    clock,
    registry,
    async finish() {
      clock.advance(started + 150 - clock.now());
      for (const release of releases) release();
      await Promise.all(held);
    },
  };
}
