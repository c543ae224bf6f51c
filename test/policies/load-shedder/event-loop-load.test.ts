import { describe, expect, it } from 'vitest';
import {
  type Criticality,
  type EventLoopSample,
  eventLoopLoad,
  loadShedder,
  OptionsError,
  pipeline,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';

/** A signal on `clock` whose samples the test sets. */
function controlled(clock: ManualClock, options = {}) {
  const sample = { utilization: 0.5, lagMs: 0 } as { utilization: number; lagMs: number };
  const seen: number[] = [];
  const signal = eventLoopLoad({
    interval: 100,
    clock,
    source: (elapsed): EventLoopSample => {
      seen.push(elapsed);
      return { ...sample };
    },
    ...options,
  });
  return { signal, sample, seen };
}

describe('eventLoopLoad', () => {
  it('rises a step a sample while the loop is too busy or too late, and falls half a step once it is not', async () => {
    const clock = new ManualClock();
    const { signal, sample } = controlled(clock);
    expect(signal.level()).toBe(0);
    sample.utilization = 0.95;
    const levels: number[] = [];
    for (let i = 0; i < 3; i++) {
      await clock.advanceAsync(100);
      levels.push(signal.level());
    }
    sample.utilization = 0.5;
    sample.lagMs = 150;
    await clock.advanceAsync(100);
    levels.push(signal.level());
    sample.lagMs = 10;
    for (let i = 0; i < 2; i++) {
      await clock.advanceAsync(100);
      levels.push(signal.level());
    }
    expect(levels.map((l) => Math.round(l * 100) / 100)).toEqual([0.1, 0.2, 0.3, 0.4, 0.35, 0.3]);
    signal.dispose();
  });

  it('jumps to the share of the excess at once when the loop is far over its limit, not a step at a time', async () => {
    const clock = new ManualClock();
    const { signal, sample } = controlled(clock);
    signal.level();
    sample.lagMs = 400; // 4 × maxLag: refuse the 3/4 the loop cannot serve
    await clock.advanceAsync(100);
    expect(signal.level()).toBeCloseTo(0.75, 12);
    sample.lagMs = 150; // over, but below the level reached: it rises a step from there
    await clock.advanceAsync(100);
    expect(signal.level()).toBeCloseTo(0.85, 12);
    signal.dispose();
  });

  it('tells how long its level takes to fall back to 0 once the loop is within its limits', async () => {
    const clock = new ManualClock();
    const { signal, sample } = controlled(clock);
    expect(signal.settleMs?.()).toBe(0);
    sample.utilization = 0.95;
    signal.level();
    for (let i = 0; i < 3; i++) await clock.advanceAsync(100);
    // 0.3 falls 0.05 a sample of 100 ms: 6 samples.
    expect(signal.settleMs?.()).toBe(600);
    signal.dispose();
  });

  it("reads this process's event loop when given no source: a loop blocked for 300 ms asks at once for the share of the excess", async () => {
    const signal = eventLoopLoad({ interval: 20, maxLag: 30, maxUtilization: 1 });
    expect(signal.level()).toBe(0); // starts sampling
    const until = performance.now() + 300;
    while (performance.now() < until) {
      // Blocks the loop: its delay (and the sampling timer's lateness) is at least 300 ms.
    }
    while (signal.level() === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    // About 300 ms late against 30: nearly 9/10 at the first sample (a step would be 0.1), and
    // at most half a step less a sample after it; falling below 0.5 would take 8 samples.
    expect(signal.level()).toBeGreaterThan(0.5);
    expect(signal.describe?.()).toMatch(/\d+ ms late/);
    signal.dispose();
  });

  it('never asks for more than maxLevel', async () => {
    const clock = new ManualClock();
    const { signal, sample } = controlled(clock, { maxLevel: 0.25, step: 0.2 });
    sample.utilization = 1;
    signal.level();
    await clock.advanceAsync(1_000);
    expect(signal.level()).toBe(0.25);
    signal.dispose();
  });

  it('samples only while read or above 0, and keeps no timer after dispose', async () => {
    const clock = new ManualClock();
    const { signal, seen } = controlled(clock);
    expect(clock.pendingTimers).toBe(0); // nothing until first read
    signal.level();
    expect(clock.pendingTimers).toBe(1);
    await clock.advanceAsync(100); // read since the last sample: samples and re-arms
    await clock.advanceAsync(100); // no read since: stops
    expect(clock.pendingTimers).toBe(0);
    expect(seen).toEqual([100, 100]);
    signal.level();
    signal.dispose();
    expect(clock.pendingTimers).toBe(0);
  });

  it.each([
    [{ maxUtilization: 0 }, 'maxUtilization'],
    [{ maxUtilization: 1.5 }, 'maxUtilization'],
    [{ interval: 5 }, 'interval'],
    [{ step: 0 }, 'step'],
    [{ maxLevel: 1 }, 'maxLevel'],
    [{ source: 3 }, 'source'],
  ])('refuses %o with an OptionsError naming %s', (options, field) => {
    expect(() => eventLoopLoad(options as never)).toThrow(OptionsError);
    expect(() => eventLoopLoad(options as never)).toThrow(field);
  });

  it('makes a load shedder refuse at least its level, lowest criticality first', async () => {
    const clock = new ManualClock();
    const { signal, sample } = controlled(clock);
    const shedder = loadShedder({ signal, random: () => 0.5, clock });
    const p = pipeline(shedder);
    const levels: Criticality[] = ['sheddable', 'sheddable-plus', 'critical', 'critical-plus'];
    // Calls of each level, all accepted, so the formula alone would refuse nothing.
    for (let i = 0; i < 40; i++) await p.tryExecute(() => 'ok', { criticality: levels[i % 4] });
    sample.utilization = 0.99;
    for (let i = 0; i < 3; i++) await clock.advanceAsync(100);
    expect(signal.level()).toBeCloseTo(0.3, 12);
    // 0.3 of 40 requests = 12: the 10 sheddable ones entirely, then 2 of 10 sheddable-plus.
    expect(shedder.refusalProbability('sheddable')).toBe(1);
    expect(shedder.refusalProbability('sheddable-plus')).toBeCloseTo(0.2, 12);
    expect(shedder.refusalProbability('critical')).toBe(0);
    expect(shedder.stats().refusalRate).toBeCloseTo(0.3, 12);
    expect(() => loadShedder({ signal: {} as never })).toThrow('signal');
    signal.dispose();
  });
});
