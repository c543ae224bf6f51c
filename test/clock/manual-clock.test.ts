import { describe, expect, it } from 'vitest';
import { ErrorCode, type OptionsError } from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { optionsRejection } from '../support/errors.js';

/** The OptionsError `make` throws (or rejects with), for its fields. */
async function optionsErrorOf(make: () => unknown): Promise<OptionsError> {
  const error = await optionsRejection(make);
  expect(error.code).toBe(ErrorCode.InvalidOption);
  return error;
}

describe('ManualClock.runAll', () => {
  it.each([1, 3, 10])('returns when exactly the limit (%i) fired and none is left', async (n) => {
    const clock = new ManualClock();
    const fired: number[] = [];
    for (let i = 1; i <= n; i++) clock.setTimer(() => fired.push(clock.now()), i * 10);
    await expect(clock.runAll(n)).resolves.toBeUndefined();
    expect(fired).toEqual(Array.from({ length: n }, (_, i) => (i + 1) * 10));
    expect(clock.pendingTimers).toBe(0);
  });

  it('stops after the limit and throws when a timer is still left (one re-arming itself)', async () => {
    const clock = new ManualClock();
    let fired = 0;
    const tick = (): void => {
      fired++;
      clock.setTimer(tick, 5);
    };
    clock.setTimer(tick, 5);
    await expect(clock.runAll(4)).rejects.toThrow(
      /ManualClock\.runAll: 4 timers fired and more are due; is a timer re-arming itself\?/,
    );
    expect(fired).toBe(4);
    expect(clock.now()).toBe(20);
    expect(clock.pendingTimers).toBe(1);
  });

  it('runAll(0) fires nothing, and throws only when a timer is pending', async () => {
    const clock = new ManualClock();
    await expect(clock.runAll(0)).resolves.toBeUndefined();
    clock.setTimer(() => {}, 1);
    await expect(clock.runAll(0)).rejects.toThrow(/0 timers fired and more are due/);
    await expect(clock.runAll(Number.POSITIVE_INFINITY)).resolves.toBeUndefined();
  });

  it.each([-1, 1.5, Number.NaN, '10'])('refuses a limit of %s', async (limit) => {
    const e = await optionsErrorOf(() => new ManualClock().runAll(limit as number));
    expect(e).toMatchObject({ option: 'limit', value: limit });
    expect(e.message).toContain('an integer in [0, Infinity]');
  });
});

describe('ManualClock time only moves forward, by a number', () => {
  const bad: [string, unknown][] = [
    ['-1', -1],
    ['-0.001', -0.001],
    ['NaN', Number.NaN],
    ['undefined', undefined],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['"5"', '5'],
  ];
  it.each(bad)(
    'advance(%s) throws an OptionsError naming ms and leaves the clock',
    async (_, ms) => {
      const clock = new ManualClock(100);
      let fired = false;
      clock.setTimer(() => {
        fired = true;
      }, 0);
      for (const move of [
        () => clock.advance(ms as number),
        () => clock.advanceAsync(ms as number),
      ]) {
        const e = await optionsErrorOf(move);
        expect(e.option).toBe('ms');
        expect(Object.is(e.value, ms)).toBe(true);
        expect(e.message).toContain('a finite number of ms >= 0');
      }
      expect(clock.now()).toBe(100);
      expect(fired).toBe(false);
      clock.advance(0);
      expect(fired).toBe(true);
    },
  );

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['"0"', '0'],
  ])('new ManualClock(%s) throws an OptionsError naming start', async (_, start) => {
    const e = await optionsErrorOf(() => new ManualClock(start as number));
    expect(e.option).toBe('start');
    expect(e.message).toContain('a finite number of ms');
  });

  it('setTimer with a delay that is not a number throws rather than making the clock NaN', async () => {
    const clock = new ManualClock();
    for (const ms of [Number.NaN, undefined, '5']) {
      const e = await optionsErrorOf(() => clock.setTimer(() => {}, ms as number));
      expect(e.option).toBe('ms');
    }
    expect(clock.pendingTimers).toBe(0);
    clock.setTimer(() => {}, -5); // a deadline already passed fires at once, as setTimeout does
    clock.advance(0);
    expect(clock.pendingTimers).toBe(0);
    expect(clock.now()).toBe(0);
  });
});
