/**
 * The scripted dependency is a real HTTP server on a loopback port, called with real fetch.
 * Only the script's clock is in the test's hands (`now`), so which phase answers never depends
 * on how fast the machine is; latencies are real.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Dependency,
  type Phase,
  phaseAt,
  scriptedPhases,
  start,
} from '../../demo/dependency.mjs';

const SLOW = 300;
const phases = scriptedPhases({ phaseMs: 1000, slowLatency: SLOW });

let dependency: Dependency | undefined;
afterEach(async () => {
  await dependency?.close();
  dependency = undefined;
});

/** Starts the scripted server with a clock the test sets. */
async function startAt(script: readonly Phase[]) {
  const clock = { t: 0 };
  dependency = await start({ phases: script, now: () => clock.t });
  return { dependency, clock };
}

async function get(url: string) {
  const began = performance.now();
  const response = await fetch(url);
  const body = await response.text();
  return { status: response.status, body, elapsed: performance.now() - began };
}

/** Waits until `count` requests have reached the server (they arrive asynchronously). */
async function arrived(server: Dependency, count: number): Promise<void> {
  while (server.requests() < count) await new Promise((resolve) => setTimeout(resolve, 2));
}

describe('scriptedPhases', () => {
  it('scripts healthy, failing, slow and recovered phases of the given lengths', () => {
    const script = scriptedPhases({ phaseMs: [1, 2, 3, 4], slowLatency: 900, failure: 'reset' });
    expect(script).toEqual([
      { name: 'healthy', ms: 1, behaviour: 'ok', latency: 5 },
      { name: 'failing', ms: 2, behaviour: 'reset', latency: 0 },
      { name: 'slow', ms: 3, behaviour: 'ok', latency: 900 },
      { name: 'recovered', ms: 4, behaviour: 'ok', latency: 5 },
    ]);
  });

  it('fails with 503 answers unless told to drop connections', () => {
    expect(scriptedPhases({ phaseMs: 5 })[1]).toMatchObject({
      name: 'failing',
      behaviour: 'error',
    });
  });

  it('refuses a number of phase lengths other than four', () => {
    expect(() => scriptedPhases({ phaseMs: [1, 2, 3] })).toThrow(/Expected 4 phase lengths/);
  });
});

describe('phaseAt', () => {
  it('switches phase exactly at each boundary', () => {
    expect(phaseAt(phases, 0).name).toBe('healthy');
    expect(phaseAt(phases, 999.9).name).toBe('healthy');
    expect(phaseAt(phases, 1000).name).toBe('failing');
    expect(phaseAt(phases, 2000).name).toBe('slow');
    expect(phaseAt(phases, 3999).name).toBe('recovered');
  });

  it('keeps the first phase before the start and the last one after the end', () => {
    expect(phaseAt(phases, -5).name).toBe('healthy');
    expect(phaseAt(phases, 1e9).name).toBe('recovered');
  });
});

describe('the scripted dependency', () => {
  it('listens on a loopback address with a free port', async () => {
    const { dependency } = await startAt(phases);
    expect(dependency.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(dependency.url).not.toBe('http://127.0.0.1:0/');
  });

  it('answers 200 without the slow latency while healthy', async () => {
    // A slow latency far above anything a busy machine adds to a 5 ms loopback answer, so the
    // bound tells the phases apart without depending on the machine's speed.
    const slowLatency = 10_000;
    const { dependency, clock } = await startAt(scriptedPhases({ phaseMs: 1000, slowLatency }));
    clock.t = 500;
    const answer = await get(dependency.url);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('healthy\n');
    expect(answer.elapsed).toBeLessThan(slowLatency / 2);
  });

  it('answers 503 while failing', async () => {
    const { dependency, clock } = await startAt(phases);
    clock.t = 1500;
    const answer = await get(dependency.url);
    expect(answer.status).toBe(503);
    expect(answer.body).toBe('failing\n');
  });

  it('drops the connection while failing with resets', async () => {
    const script = scriptedPhases({ phaseMs: 1000, failure: 'reset' });
    const { dependency, clock } = await startAt(script);
    clock.t = 1500;
    await expect(fetch(dependency.url)).rejects.toThrow(TypeError);
    expect(dependency.requests()).toBe(1);
  });

  it('takes at least the slow latency to answer while slow', async () => {
    const { dependency, clock } = await startAt(phases);
    clock.t = 2500;
    const answer = await get(dependency.url);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('slow\n');
    expect(answer.elapsed).toBeGreaterThanOrEqual(SLOW);
  });

  it('answers 200 quickly again once recovered', async () => {
    const { dependency, clock } = await startAt(phases);
    clock.t = 2500;
    const slow = get(dependency.url);
    await arrived(dependency, 1);
    clock.t = 3500;
    const answer = await get(dependency.url);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('recovered\n');
    // The phase is the one in force when the request arrived.
    expect((await slow).body).toBe('slow\n');
  });

  it('reports the phase in force now', async () => {
    const { dependency, clock } = await startAt(phases);
    expect(dependency.phase().name).toBe('healthy');
    clock.t = 2000;
    expect(dependency.phase().name).toBe('slow');
  });

  it('counts every request that reached it, and when each arrived', async () => {
    const { dependency, clock } = await startAt(phases);
    expect(dependency.requests()).toBe(0);
    for (const t of [10, 1200, 1300, 3100]) {
      clock.t = t;
      await get(dependency.url);
    }
    expect(dependency.requests()).toBe(4);
    expect(dependency.arrivals()).toEqual([10, 1200, 1300, 3100]);
  });

  it('reports the most requests it held open at once', async () => {
    const script = scriptedPhases({ phaseMs: 1000, slowLatency: 600_000 });
    const { dependency, clock } = await startAt(script);
    expect(dependency.peakInFlight()).toBe(0);
    await get(dependency.url);
    expect(dependency.peakInFlight()).toBe(1);
    clock.t = 2500;
    // Held open until the server closes (after the test), which fails them: expected.
    const held = [1, 2, 3].map(() => fetch(dependency.url).catch(() => undefined));
    await arrived(dependency, 4);
    expect(dependency.peakInFlight()).toBe(3);
    clock.t = 3500;
    await get(dependency.url);
    expect(dependency.peakInFlight()).toBe(4);
    void held;
  });

  it('counts a request the client gave up on before the answer', async () => {
    const { dependency, clock } = await startAt(phases);
    clock.t = 2500;
    // Aborted once it arrived: a fixed 20 ms could abort it before it got there on a busy machine.
    const abort = new AbortController();
    const call = fetch(dependency.url, { signal: abort.signal });
    await arrived(dependency, 1);
    abort.abort();
    await expect(call).rejects.toThrow();
    expect(dependency.requests()).toBe(1);
  });

  it('closes at once despite keep-alive connections and a slow answer in flight', async () => {
    const script = scriptedPhases({ phaseMs: 1000, slowLatency: 600_000 });
    const { dependency: server, clock } = await startAt(script);
    dependency = undefined;
    await get(server.url); // leaves a keep-alive connection open
    clock.t = 2500;
    const stuck = fetch(server.url);
    await arrived(server, 2);
    // Would hang for the 10-minute answer (past the test timeout) if close waited for it.
    await server.close();
    await expect(stuck).rejects.toThrow(TypeError);
    await expect(fetch(server.url)).rejects.toThrow(TypeError);
  });
});
