import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { pipeline, type RetryBudget, retry, retryBudget } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';

/**
 * Sends `calls` requests (10 at a time) through `retry({ maxAttempts: 4, delay: 1 ms })` to a
 * real HTTP server on loopback that answers every request with a 503; returns the requests the
 * server counted.
 */
async function stormOverHttp(calls: number, budget?: RetryBudget): Promise<number> {
  let received = 0;
  const server = createServer((_req, res) => {
    received++;
    res.writeHead(503).end('down');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const p = pipeline(
      retry({
        maxAttempts: 4,
        delay: 1,
        jitter: 'none',
        backoff: 'constant',
        handleResult: (r: Response) => r.status === 503,
        budget,
      }),
    );
    const call = () =>
      p.execute(async () => {
        const response = await fetch(url);
        await response.arrayBuffer();
        return response;
      });
    const lanes = Array.from({ length: 10 }, async () => {
      for (let i = 0; i < calls / 10; i++) expect((await call()).status).toBe(503);
    });
    await Promise.all(lanes);
  } finally {
    server.closeAllConnections();
    server.close();
  }
  return received;
}

describe('retry budget against a failing HTTP dependency on loopback', () => {
  it('caps the requests that reach it at the calls plus 20 % and the reserve', async () => {
    const calls = 200;
    expect(await stormOverHttp(calls)).toBe(calls * 4);
    // The budget's clock stands still, so its window never slides and its reserve holds its
    // first 10 whatever the speed of the machine: the bound is exact.
    const budget = retryBudget({ clock: new ManualClock() });
    const received = await stormOverHttp(calls, budget);
    expect(received).toBeGreaterThanOrEqual(calls);
    expect(received).toBeLessThanOrEqual(calls * 1.2 + 10);
    expect(budget.stats()).toMatchObject({
      calls,
      allowed: received - calls,
      active: 0,
      inFlight: 0,
    });
  }, 60_000);
});
