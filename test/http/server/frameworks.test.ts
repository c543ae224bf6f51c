import { afterEach, describe, expect, it } from 'vitest';
import { serviceGuard } from '../../../src/http/index.js';
import { adaptiveLimit, eventLoopLoad, KeyedRateLimiter, loadShedder } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import {
  FRAMEWORKS,
  type GuardedServer,
  openHanging,
  serveGuarded,
} from '../../support/guarded-servers.js';

interface Seen {
  timeLeft: number | null;
  criticality: string | null;
  hasSignal: boolean;
}
interface Problem {
  type: string;
  status: number;
}

/**
 * The headers of a limit of 2 a minute, after the first request (1 left, the burst free again
 * in 30 s) and on the third (refused, the next permit in 30 s).
 */
const HEADERS = {
  'draft-6': [
    {
      'ratelimit-policy': '2;w=60',
      'ratelimit-limit': '2',
      'ratelimit-remaining': '1',
      'ratelimit-reset': '30',
    },
    {
      'ratelimit-policy': '2;w=60',
      'ratelimit-limit': '2',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '30',
    },
  ],
  'draft-7': [
    { 'ratelimit-policy': '2;w=60', ratelimit: 'limit=2, remaining=1, reset=30' },
    { 'ratelimit-policy': '2;w=60', ratelimit: 'limit=2, remaining=0, reset=30' },
  ],
  'draft-8': [
    { 'ratelimit-policy': '"2-in-1min";q=2;w=60', ratelimit: '"2-in-1min";r=1;t=30' },
    { 'ratelimit-policy': '"2-in-1min";q=2;w=60', ratelimit: '"2-in-1min";r=0;t=30' },
  ],
  latest: [
    { 'ratelimit-policy': '"2-in-1min";q=2;w=60', ratelimit: '"2-in-1min";r=1;t=30' },
    { 'ratelimit-policy': '"2-in-1min";q=2;w=60', ratelimit: '"2-in-1min";r=0;t=30' },
  ],
} as const;
const LEGACY = [
  { 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '30' },
  { 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' },
];

function picked(res: Response, names: readonly string[]): Record<string, string | null> {
  return Object.fromEntries(names.map((n) => [n, res.headers.get(n)]));
}

/** A shedder whose event loop reads 100 % busy once its clock moves, and that draws no chance. */
function overloadedShedder(clock: ManualClock) {
  const signal = eventLoopLoad({
    clock,
    interval: 1_000,
    maxUtilization: 0.4,
    source: () => ({ utilization: 1, lagMs: 0 }),
  });
  return { signal, shedder: loadShedder({ signal, clock, random: () => 0 }) };
}

describe.each(FRAMEWORKS)('serviceGuard in %s', (framework) => {
  let server: GuardedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it.each(Object.keys(HEADERS) as (keyof typeof HEADERS)[])(
    'sends the %s rate limit headers on every response, and 429 with the exact Retry-After past the limit',
    async (version) => {
      const clock = new ManualClock();
      const limiter = new KeyedRateLimiter({ limit: 2, period: 60_000, clock });
      const guard = serviceGuard({ rateLimit: { limiter, headers: version, legacyHeaders: true } });
      server = await serveGuarded(framework, guard);
      const [first, refused] = HEADERS[version];
      const names = [...Object.keys(first), ...Object.keys(LEGACY[0]!)];
      const ok = await fetch(`${server.url}/work`);
      expect(ok.status).toBe(200);
      expect(picked(ok, names)).toEqual({ ...first, ...LEGACY[0] });
      expect((await fetch(`${server.url}/work`)).status).toBe(200);
      const res = await fetch(`${server.url}/work`);
      expect(res.status).toBe(429);
      expect(picked(res, names)).toEqual({ ...refused, ...LEGACY[1] });
      expect(res.headers.get('retry-after')).toBe('30');
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toEqual({
        type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
        title: 'Request cannot be satisfied as assigned quota has been exceeded',
        status: 429,
        'violated-policies': ['2-in-1min'],
      });
      expect(server.probe.runs).toBe(2);
      clock.advance(30_000);
      expect((await fetch(`${server.url}/work`)).status).toBe(200);
    },
  );

  it('runs the handler in a request context with the inbound deadline, capped, and criticality', async () => {
    const guard = serviceGuard({ deadline: { max: 5_000 } });
    server = await serveGuarded(framework, guard);
    const capped = await fetch(`${server.url}/work`, {
      headers: { 'x-timeout-ms': '100000', 'x-criticality': 'sheddable' },
    });
    const seen = (await capped.json()) as Seen;
    expect(seen.timeLeft).toBeGreaterThan(0);
    expect(seen.timeLeft).toBeLessThanOrEqual(5_000);
    expect(seen.criticality).toBe('sheddable');
    expect(seen.hasSignal).toBe(true);
    const none = await (await fetch(`${server.url}/work`)).json();
    expect(none).toEqual({ timeLeft: null, criticality: null, hasSignal: true });
    guard.dispose();
  });

  it('answers 504 to a request whose deadline has passed, without running the handler', async () => {
    const guard = serviceGuard();
    server = await serveGuarded(framework, guard);
    const res = await fetch(`${server.url}/work`, { headers: { 'x-timeout-ms': '0' } });
    expect(res.status).toBe(504);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await res.json()) as Problem).status).toBe(504);
    expect(server.probe.runs).toBe(0);
  });

  it("aborts the handler's signal when the client disconnects", async () => {
    const guard = serviceGuard();
    server = await serveGuarded(framework, guard);
    const drop = openHanging(server.url);
    await server.probe.started;
    drop();
    await server.probe.aborted; // the test times out if it never aborts
    expect(server.probe.runs).toBe(1);
  });

  it('answers 503 with a Retry-After from the load signal while shedding, sheddable requests first', async () => {
    const clock = new ManualClock();
    const { signal, shedder } = overloadedShedder(clock);
    const guard = serviceGuard({ shedding: shedder });
    server = await serveGuarded(framework, guard);
    expect((await fetch(`${server.url}/work`)).status).toBe(200); // starts the sampling
    clock.advance(1_000); // 100 % busy against 40 %: refuse 60 % at once
    expect(signal.level()).toBeCloseTo(0.6, 12);
    const shed = { headers: { 'x-criticality': 'sheddable' } };
    const refused = await Promise.all([1, 2, 3, 4].map(() => fetch(`${server!.url}/work`, shed)));
    expect(refused.map((r) => r.status)).toEqual([503, 503, 503, 503]);
    // 0.6 falls 0.05 a sample of 1 s: back to 0 in 12 s.
    expect(refused[0]!.headers.get('retry-after')).toBe('12');
    expect(refused[0]!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await refused[0]!.json()) as Problem;
    expect(problem.type).toMatch(/temporary-reduced-capacity$/);
    expect(problem.status).toBe(503);
    // 60 % of the 5 requests are the 4 sheddable ones: critical-plus goes through.
    const critical = await fetch(`${server.url}/work`, {
      headers: { 'x-criticality': 'critical-plus' },
    });
    expect(critical.status).toBe(200);
    expect(server.probe.runs).toBe(2);
    signal.dispose();
    guard.dispose();
  });

  it('answers 503 with Retry-After past the adaptive limit, and holds the permit until the response ends', async () => {
    const limit = adaptiveLimit({ initialLimit: 1, minLimit: 1, maxLimit: 1 });
    const guard = serviceGuard({ concurrency: limit });
    server = await serveGuarded(framework, guard);
    const drop = openHanging(server.url);
    await server.probe.started;
    expect(limit.inFlight).toBe(1);
    const refused = await fetch(`${server.url}/work`);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as Problem).type).toMatch(/temporary-reduced-capacity$/);
    drop();
    await server.probe.aborted;
    await until(() => limit.inFlight === 0);
    expect((await fetch(`${server.url}/work`)).status).toBe(200);
    expect(server.probe.runs).toBe(2);
  });
});

/** Waits, a turn of the event loop at a time, until `done()` holds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}
