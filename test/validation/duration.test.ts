import { describe, expect, it } from 'vitest';
import { ErrorCode, OptionsError } from '../../src/index.js';
import { parseDurationString } from '../../src/validation/duration.js';
import { duration, MAX_DURATION_MS, positiveDuration } from '../../src/validation/validate.js';
import { optionsError } from '../support/errors.js';

const FORMS = 'a duration: ms as a number, or a string like "250ms", "30s", "1.5s", "5m", "1h"';

describe('parseDurationString', () => {
  it.each([
    ['250ms', 250],
    ['0ms', 0],
    ['30s', 30_000],
    ['1.5s', 1_500],
    ['1.1s', 1_100],
    ['0.25ms', 0.25],
    ['5m', 300_000],
    ['1h', 3_600_000],
  ])('reads %j as %d ms', (input, ms) => {
    expect(parseDurationString(input, false)).toBe(ms);
  });

  it('reads "Infinity" only where Infinity is allowed', () => {
    expect(parseDurationString('Infinity', true)).toBe(Number.POSITIVE_INFINITY);
    expect(parseDurationString('Infinity', false)).toBeUndefined();
  });

  it.each(['250', '30 s', ' 30s', '30S', '1d', '-5s', '+5s', '1e3ms', '.5s', '5.s', '1h30m', ''])(
    'reads nothing from %j',
    (input) => {
      expect(parseDurationString(input, true)).toBeUndefined();
    },
  );
});

describe('duration options', () => {
  it('take ms as a number and a string with its unit alike', () => {
    expect(duration(250, 'delay', 0)).toBe(250);
    expect(duration('250ms', 'delay', 0)).toBe(250);
    expect(duration('1.5s', 'delay', 0)).toBe(1_500);
    expect(duration('5m', 'delay', 0)).toBe(300_000);
    expect(duration(undefined, 'delay', 42)).toBe(42);
  });

  it('take Infinity, as a number or as "Infinity", only where it is allowed', () => {
    expect(duration(Number.POSITIVE_INFINITY, 'queueTimeout', 0, 1, true)).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(duration('Infinity', 'queueTimeout', 0, 1, true)).toBe(Number.POSITIVE_INFINITY);
    const e = optionsError(() => duration('Infinity', 'breakDuration', 0, 1));
    expect(e.message).toBe(
      `Expected \`breakDuration\` to be a number of ms in [1, ${MAX_DURATION_MS}] (or a string like "30s"), got "Infinity"`,
    );
  });

  it('refuse a malformed string naming the field, the value, the forms and the range', () => {
    const e = optionsError(() => duration('30 secs', 'breakDuration', 0, 1));
    expect(e).toBeInstanceOf(OptionsError);
    expect(e.code).toBe(ErrorCode.InvalidOption);
    expect(e.option).toBe('breakDuration');
    expect(e.value).toBe('30 secs');
    expect(e.message).toBe(
      `Expected \`breakDuration\` to be ${FORMS}, in [1, ${MAX_DURATION_MS}] ms, got "30 secs"`,
    );
  });

  it('say "Infinity" among the forms where it is allowed', () => {
    const e = optionsError(() => duration('never', 'queueTimeout', 0, 1, true));
    expect(e.expected).toBe(`${FORMS}, or "Infinity", in [1, ${MAX_DURATION_MS}] ms`);
  });

  it('say that a string of bare digits needs a unit', () => {
    const e = optionsError(() => duration('250', 'delay', 0));
    expect(e.message).toBe(
      `Expected \`delay\` to be ${FORMS}, in [0, ${MAX_DURATION_MS}] ms (a string needs a unit), got "250"`,
    );
  });

  it('refuse a well-formed string out of range with the range', () => {
    const e = optionsError(() => duration('600h', 'maxWait', 0));
    expect(e.message).toBe(
      `Expected \`maxWait\` to be a number of ms in [0, ${MAX_DURATION_MS}] (or a string like "30s"), got "600h"`,
    );
    expect(() => duration('50ms', 'interval', 0, 100, false, 60_000)).toThrow(
      'a number of ms in [100, 60000]',
    );
    expect(() => duration('2m', 'interval', 0, 100, false, 60_000)).toThrow(
      'a number of ms in [100, 60000]',
    );
  });

  it('refuse values of other types with the range and the string form', () => {
    for (const value of [null, true, Number.NaN, {}]) {
      expect(optionsError(() => duration(value, 'delay', 0)).expected).toBe(
        `a number of ms in [0, ${MAX_DURATION_MS}] (or a string like "30s")`,
      );
    }
  });
});

describe('positive duration options (Infinity: off)', () => {
  it('take a number, a string with its unit and "Infinity"', () => {
    expect(positiveDuration(1_500, 'slowCallDuration')).toBe(1_500);
    expect(positiveDuration('1.5s', 'slowCallDuration')).toBe(1_500);
    expect(positiveDuration('Infinity', 'slowCallDuration')).toBe(Number.POSITIVE_INFINITY);
  });

  it('refuse 0 however written, and a malformed string with the forms', () => {
    const expected = `a number of ms in (0, ${MAX_DURATION_MS}] or Infinity (off) (or a string like "30s")`;
    expect(optionsError(() => positiveDuration('0ms', 'slowCallDuration')).expected).toBe(expected);
    expect(optionsError(() => positiveDuration(0, 'slowCallDuration')).expected).toBe(expected);
    expect(optionsError(() => positiveDuration('1,5s', 'slowCallDuration')).expected).toBe(
      `${FORMS}, or "Infinity", in (0, ${MAX_DURATION_MS}] ms`,
    );
  });
});
