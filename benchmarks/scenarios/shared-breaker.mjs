/**
 * A closed circuit breaker with shared signals through Redis (`sharedSignals(breaker, {
 * client, quorum: 2 })` on an ioredis client to a `redis-server` this scenario starts on a
 * loopback port) against the same breaker without them, on the happy path with an async target.
 * Shared signals act only on state changes and half-open admission, so the closed path must
 * cost the same: the row is judged against the plain breaker, timed in alternating batches.
 * A second row does the same while its Redis server is stopped (SIGSTOP: connections stay open
 * and nothing answers, the hardest failure for a client): the signals' polls time out in the
 * background, and no call may wait on them.
 *
 * Without `redis-server` on PATH, or with a build from before shared signals, the scenario has
 * no rows.
 */
import { Redis } from 'ioredis';
import { CircuitBreaker, pipeline } from '../lib/breakwater.mjs';
import { breakwaterModule, LIB } from '../lib/peers.mjs';
import { over } from '../lib/prose.mjs';
import { redisServerVersion, startRedisServer } from '../lib/redis-server.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Circuit breaker with shared signals through Redis, closed';
export const order = 1.5;
/** Not pinned to one core: the redis-server it starts would inherit the pin. */
export const pinned = false;

const PLAIN = 'breaker closed, execute, async target';
const SHARED = 'breaker closed with shared signals, execute, async target';
const STOPPED =
  'breaker closed with shared signals, Redis stopped (SIGSTOP), execute, async target';

const redisModule = await breakwaterModule('redis/index.js').catch(() => undefined);
const available = redisModule?.sharedSignals !== undefined && redisServerVersion() !== undefined;

let server;
let stoppedServer;
let made = 0;

const breaker = () =>
  new CircuitBreaker({ window: { kind: 'consecutive', threshold: 5 }, breakDuration: 10_000 });

/** The shared row, on `server`, or with the server stopped once the signals synced. */
async function sharedRow(stopped = false) {
  let on = server;
  if (stopped) on = stoppedServer ??= await startRedisServer();
  else on = server ??= await startRedisServer();
  const client = new Redis({
    host: '127.0.0.1',
    port: on.port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  await client.connect();
  const b = breaker();
  const signals = redisModule.sharedSignals(b, {
    client,
    name: `bench-${process.pid}-${++made}`,
    quorum: 2,
  });
  await signals.sync();
  if (stopped) {
    on.pause();
    // Its next poll times out: the signals know the store is away before the row is timed.
    await new Promise((resolve) => signals.onStoreStateChange(resolve));
  }
  const p = pipeline(b);
  return {
    op: () => p.execute(asyncTarget),
    dispose() {
      if (stopped) on.resume();
      signals.dispose();
      client.disconnect();
    },
  };
}

export function rows() {
  if (!available) return [];
  return [
    bareAsync(),
    {
      library: LIB.breakwater,
      variant: PLAIN,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = pipeline(breaker());
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
    {
      library: LIB.breakwater,
      variant: SHARED,
      kind: 'async',
      baseline: BARE_ASYNC,
      versus: PLAIN,
      prepare: () => sharedRow(),
      check: isOne,
    },
    {
      library: LIB.breakwater,
      variant: STOPPED,
      kind: 'async',
      baseline: BARE_ASYNC,
      versus: PLAIN,
      prepare: () => sharedRow(true),
      check: isOne,
    },
  ];
}

export const budgets = [
  {
    id: 'shared-breaker-vs-plain',
    rank: 32,
    kind: 'versus',
    label: 'breaker with shared signals vs plain, closed path, per call',
    metric: 'versusNs',
    limit: 5,
    rows: [{ scenario: 'shared-breaker', variant: SHARED }],
  },
  {
    id: 'shared-breaker-bytes',
    rank: 33,
    kind: 'versus',
    label: 'breaker with shared signals vs plain, closed path, bytes per call',
    metric: 'versusBytes',
    limit: 0,
    rows: [{ scenario: 'shared-breaker', variant: SHARED }],
  },
  {
    id: 'shared-breaker-redis-stopped',
    rank: 38,
    kind: 'versus',
    label:
      'breaker with shared signals while its Redis server is stopped vs plain, closed path, per call',
    metric: 'versusNs',
    limit: 5,
    rows: [{ scenario: 'shared-breaker', variant: STOPPED }],
  },
  {
    id: 'shared-breaker-redis-stopped-bytes',
    rank: 39,
    kind: 'versus',
    label: 'breaker with shared signals while its Redis server is stopped vs plain, bytes per call',
    metric: 'versusBytes',
    limit: 0,
    rows: [{ scenario: 'shared-breaker', variant: STOPPED }],
  },
];

/** This scenario's paragraph in “What the numbers say”; none when its rows are absent. */
export function reading({ get }) {
  const S = 'shared-breaker';
  const shared = get(S, 'breakwater', SHARED);
  const plain = get(S, 'breakwater', PLAIN);
  const stopped = get(S, 'breakwater', STOPPED);
  if (shared && plain) {
    const away = stopped ? `, and ${over(stopped)} while their Redis server is stopped` : '';
    return `Shared signals leave a closed breaker's calls as they were: ${over(shared)} with them${away}, ${over(plain)} without.`;
  }
}
