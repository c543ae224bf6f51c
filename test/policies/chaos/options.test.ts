import { describe, expect, it } from 'vitest';
import { Chaos, chaos, chaosDefaults, OptionsError } from '../../../src/index.js';
import { errorOf } from '../../support/errors.js';

describe('chaos options', () => {
  it('default to a fault step that is off: rate 0, enabled false, no cap', () => {
    const step = chaos();
    expect(step.stats()).toEqual({
      strategy: 'fault',
      enabled: false,
      rate: 0,
      calls: 0,
      injected: 0,
      capped: 0,
      active: 0,
      realFailures: 0,
    });
    expect(step.name).toBe('chaos');
    expect(chaosDefaults).toMatchObject({ rate: 0, enabled: false, latency: 1_000 });
  });

  it.each<[string, unknown, string, string]>([
    ['a rate above 1', { rate: 1.5 }, 'rate', 'a number in [0, 1]'],
    ['a negative rate', { rate: -0.1 }, 'rate', 'a number in [0, 1]'],
    ['an enabled string', { enabled: 'yes' }, 'enabled', 'a boolean, or a function'],
    ['a negative maxActive', { maxActive: -1 }, 'maxActive', 'an integer in [0, Infinity]'],
    ['a fractional maxActive', { maxActive: 1.5 }, 'maxActive', 'an integer in [0, Infinity]'],
    ['an unknown strategy', { strategy: 'chaos' }, 'strategy', 'one of "fault", "latency"'],
    [
      'a latency on a fault step',
      { strategy: 'fault', latency: 100 },
      'latency',
      'an option of strategy "latency"',
    ],
    [
      'a negative latency',
      { strategy: 'latency', latency: -5 },
      'latency',
      'a number of ms in [0, 2147483647]',
    ],
    ['an outcome step without an outcome', { strategy: 'outcome' }, 'outcome', 'needs one'],
    ['a behaviour step without an action', { strategy: 'behavior' }, 'behavior', 'a function'],
    ['an error that is not one', { error: 'boom' }, 'error', 'an Error, or a function'],
    ['an unknown option', { injectionRate: 0.1 }, 'injectionRate', 'not a known option'],
  ])(
    'refuse %s with an OptionsError naming the field, the value and the range',
    (_, options, path, range) => {
      const error = errorOf(OptionsError, () => new Chaos(options as never));
      expect(error.option).toBe(path);
      expect(error.message).toContain(range);
      expect(error.message).toContain(`\`${path}\``);
    },
  );

  it('refuse a reconfigure that changes the strategy, and change nothing', () => {
    const step = chaos({ strategy: 'latency', latency: 100, rate: 0.5, enabled: true });
    const error = errorOf(OptionsError, () =>
      step.reconfigure({ strategy: 'fault', rate: 1, enabled: true } as never),
    );
    expect(error.option).toBe('strategy');
    expect(step.stats()).toMatchObject({ strategy: 'latency', rate: 0.5, enabled: true });
  });
});
