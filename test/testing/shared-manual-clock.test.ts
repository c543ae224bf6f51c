/**
 * SharedManualClock: one reading for every clock built from its state, moved by any of them;
 * timers are each clock's own.
 */
import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/index.js';
import { SharedManualClock } from '../../src/testing/index.js';

describe('SharedManualClock', () => {
  it('reads the time any clock of its state moved it to, in whole microseconds', () => {
    const clock = new SharedManualClock(10);
    const other = new SharedManualClock(structuredClone(clock.state));
    other.advance(2.5);
    expect(clock.now()).toBe(12.5);
    clock.advance(0.0004);
    expect(other.now()).toBe(12.5);
  });

  it('fires its own timers in order when it moves, or when another clock moved the time', () => {
    const clock = new SharedManualClock();
    const other = new SharedManualClock(clock.state);
    const fired: string[] = [];
    clock.setTimer(() => fired.push('b'), 20);
    clock.setTimer(() => fired.push('a'), 10);
    const dropped = clock.setTimer(() => fired.push('never'), 15);
    clock.clearTimer(dropped);
    other.advance(15);
    expect(fired).toEqual([]);
    clock.fireDue();
    expect(fired).toEqual(['a']);
    clock.advance(5);
    expect(fired).toEqual(['a', 'b']);
  });

  it('refuses a start that is neither a finite number nor a state, and a step back', () => {
    expect(() => new SharedManualClock(Number.NaN)).toThrow(OptionsError);
    expect(() => new SharedManualClock({ kind: 'manualClock' } as never)).toThrow(OptionsError);
    expect(() => new SharedManualClock().advance(-1)).toThrow(OptionsError);
  });
});
