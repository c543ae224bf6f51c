/**
 * A load shedder in front of a simulated dependency on the manual clock: calls arrive one per
 * millisecond (1,000 a second), and the dependency accepts `capacity` calls a second (a token
 * bucket refilled at that rate, holding up to 20), failing the others at once (every call,
 * during an outage). Randomness is seeded, so every figure is exact and the same on
 * every run.
 */
import { describe, expect, it } from 'vitest';
import { type Criticality, type LoadShedder, loadShedder, pipeline } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { seededRandom } from '../../support/random.js';

/** Calls the dependency can take at once after an idle spell: its capacity is not lost to gaps. */
const BURST = 20;
/** When the heal test's refusal rate fell below 5 %, ms after the heal (seeded). */
const BELOW_AFTER = 8_000;
const LEVELS: readonly Criticality[] = ['sheddable', 'sheddable-plus', 'critical', 'critical-plus'];

interface Run {
  readonly clock: ManualClock;
  readonly shedder: LoadShedder;
  /** Calls made, refused by the shedder, reached the dependency, by criticality. */
  made: Record<Criticality, number>;
  refused: Record<Criticality, number>;
  reached: number;
  /** The refusal probability of each call, from the shedder's own state before it. */
  expected: number;
  /** Runs `seconds` of calls; `capacity(second)` is what the dependency accepts a second then. */
  run(seconds: number, capacity: (second: number) => number, measure?: boolean): void;
  reset(): void;
}

function simulate(seed = 7, criticalityOf: (i: number) => Criticality = () => 'critical'): Run {
  const clock = new ManualClock();
  const shedder = loadShedder({ random: seededRandom(seed), clock });
  const p = pipeline(shedder);
  const zero = () => Object.fromEntries(LEVELS.map((l) => [l, 0])) as Record<Criticality, number>;
  let call = 0;
  let tokens = 1;
  const state: Run = {
    clock,
    shedder,
    made: zero(),
    refused: zero(),
    reached: 0,
    expected: 0,
    run(seconds, capacity, measure = true) {
      for (let s = 0; s < seconds; s++) {
        const perMs = capacity(Math.floor(clock.now() / 1_000)) / 1_000;
        for (let ms = 0; ms < 1_000; ms++) {
          tokens = Math.min(BURST, tokens + perMs);
          const criticality = criticalityOf(call++);
          if (measure) {
            state.made[criticality]++;
            state.expected += shedder.refusalProbability(criticality);
          }
          try {
            p.executeSync(
              () => {
                if (measure) state.reached++;
                if (tokens < 1) throw new Error('overloaded');
                tokens -= 1;
              },
              { criticality },
            );
          } catch (error) {
            if (measure && (error as Error).name === 'LoadShedError') state.refused[criticality]++;
          }
          clock.advance(1);
        }
      }
    },
    reset() {
      state.made = zero();
      state.refused = zero();
      state.reached = 0;
      state.expected = 0;
    },
  };
  return state;
}

const total = (r: Record<Criticality, number>) => LEVELS.reduce((sum, l) => sum + r[l], 0);

describe('load shedder under overload (1,000 calls a second, seeded)', () => {
  it('refuses the share the formula gives, within 1 %, over 100,000 calls at 3× overload', () => {
    const sim = simulate();
    sim.run(60, () => 333, false); // a full window first
    sim.reset();
    sim.run(100, () => 333);
    const made = total(sim.made);
    const refused = total(sim.refused);
    expect(made).toBe(100_000);
    // Each call's own probability, read from the shedder before it, summed: what the draws
    // must come to.
    expect(Math.abs(refused - sim.expected) / made).toBeLessThan(0.01);
    // And the formula at equilibrium: k × 333 of 1,000 requests go through, (1000 - 2 × 333) / 1000.
    expect(Math.abs(refused / made - (1_000 - 2 * 333) / 1_000)).toBeLessThan(0.01);
  });

  it('still lets at least a tenth of the calls reach a dependency that fails every one', () => {
    const sim = simulate(11);
    sim.run(10, () => 0, false);
    sim.reset();
    sim.run(100, () => 0);
    expect(sim.shedder.stats().refusalRate).toBe(0.9);
    expect(sim.expected / total(sim.made)).toBeCloseTo(0.9, 9); // every call drawn at 0.9
    // The draws of 100,000 calls at 0.9 (seeded: 10.18 %).
    expect(sim.reached / total(sim.made)).toBeGreaterThanOrEqual(0.1);
  });

  it('falls below 5 % refusals within 30 s of the dependency healing', () => {
    const sim = simulate(3);
    sim.run(60, () => 0, false);
    expect(sim.shedder.stats().refusalRate).toBe(0.9);
    const healed = sim.clock.now();
    let below: number | undefined;
    for (let s = 0; s < 60 && below === undefined; s++) {
      sim.run(1, () => 1_000, false);
      if (sim.shedder.stats().refusalRate < 0.05) below = sim.clock.now() - healed;
    }
    expect(below).toBeDefined();
    expect(below!).toBeLessThanOrEqual(30_000);
    // Seeded, so exact: the recent part of the window brings it down in 8 s; the whole window
    // alone would take about a minute.
    expect(below).toBe(BELOW_AFTER);
  });

  it('refuses nothing at 1 call a second with half of them failing', () => {
    const clock = new ManualClock();
    const random = seededRandom(5);
    const shedder = loadShedder({ random: seededRandom(6), clock });
    const p = pipeline(shedder);
    let refused = 0;
    for (let s = 0; s < 600; s++) {
      try {
        p.executeSync(() => {
          if (random() < 0.5) throw new Error('down');
        });
      } catch (error) {
        if ((error as Error).name === 'LoadShedError') refused++;
      }
      clock.advance(1_000);
    }
    expect(refused).toBe(0);
    expect(shedder.stats().requests).toBeLessThan(100); // the window never reaches minRequests
  });

  it('sheds four criticality classes strictly lowest first at 3× overload; the top class is never shed', () => {
    const sim = simulate(9, (i) => LEVELS[i % 4]!);
    sim.run(60, () => 333, false);
    sim.reset();
    sim.run(100, () => 333);
    const share = (l: Criticality) => sim.refused[l] / sim.made[l];
    // A third of all calls is to be refused: every sheddable call, then a third of sheddable-plus.
    expect(share('sheddable')).toBeGreaterThan(0.99);
    expect(share('sheddable-plus')).toBeGreaterThan(0.2);
    expect(share('sheddable-plus')).toBeLessThan(0.5);
    expect(share('critical')).toBeLessThan(0.001);
    expect(share('critical-plus')).toBe(0);
    expect(1 - share('critical-plus')).toBeGreaterThanOrEqual(0.999);
  });
});
