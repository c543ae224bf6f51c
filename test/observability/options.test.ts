import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from '../../src/index.js';
import {
  createObservabilityHandler,
  type ObservabilityHandlerOptions,
  observabilityHandlerDefaults,
} from '../../src/observability/index.js';
import { optionsError } from '../support/errors.js';

const registry = new Registry();
afterEach(() => registry.dispose());

/** The OptionsError a handler built with `options` throws. */
const handlerOptionsError = (options: unknown) =>
  optionsError(() =>
    createObservabilityHandler(registry, options as ObservabilityHandlerOptions).close(),
  );

describe('observabilityHandlerDefaults', () => {
  it('pins every default', () => {
    expect(observabilityHandlerDefaults).toEqual({
      basePath: '',
      critical: [],
      interval: 1000,
      maxClients: 32,
      maxKeysPerName: 20,
      title: 'breakwater',
    });
    expect(Object.isFrozen(observabilityHandlerDefaults)).toBe(true);
  });
});

describe('createObservabilityHandler options', () => {
  it.each([
    [{ interval: 99 }, 'interval', 'a number of ms in [100, 60000] (or a string like "30s")'],
    [{ interval: 60_001 }, 'interval', 'a number of ms in [100, 60000]'],
    [{ interval: '50ms' }, 'interval', 'a number of ms in [100, 60000]'],
    [{ interval: '1000' }, 'interval', 'a string needs a unit'],
    [{ maxClients: 0 }, 'maxClients', 'an integer in [1, 10000]'],
    [{ maxKeysPerName: -1 }, 'maxKeysPerName', 'an integer in [0, 100000]'],
    [{ critical: 'payments' }, 'critical', 'an array of circuit breaker names'],
    [{ critical: ['payments', ''] }, 'critical[1]', 'a non-empty breaker name'],
    [{ basePath: 'ops' }, 'basePath', "a path such as '/ops'"],
    [{ basePath: '/ops?x=1' }, 'basePath', "a path such as '/ops'"],
    [{ basePath: '//ops' }, 'basePath', "a path such as '/ops'"],
    [{ title: '' }, 'title', 'a string of 1 to 200 characters'],
    [{ collect: 20 }, 'collect', 'an options object of collectMetrics'],
    [{ collect: { maxKeysPerName: -1 } }, 'collect.maxKeysPerName', 'an integer in [0, 100000]'],
    [{ collect: { durationBuckets: [1, 0.5] } }, 'collect.durationBuckets', 'ascending'],
    [{ collect: { maxKeys: 5 } }, 'collect.maxKeys', 'not set: it is not a known option'],
  ])('refuses %j naming the option, the value and the valid range', (options, option, expected) => {
    const error = handlerOptionsError(options);
    expect(error.option).toBe(option);
    expect(error.expected).toContain(expected);
    const given = Object.values(options)[0] as Record<string, unknown>;
    const value =
      option === 'critical[1]'
        ? ''
        : option.startsWith('collect.')
          ? given[option.slice('collect.'.length)]
          : given;
    expect(error.value).toEqual(value);
    expect(error.message).toContain(`\`${option}\``);
  });

  it('names the value it refused', () => {
    expect(handlerOptionsError({ interval: 99 }).message).toBe(
      'Expected `interval` to be a number of ms in [100, 60000] (or a string like "30s"), got 99',
    );
  });

  it('takes the interval as a duration string, as every duration option', () => {
    expect(() => createObservabilityHandler(registry, { interval: '2s' }).close()).not.toThrow();
    expect(() => createObservabilityHandler(registry, { interval: '100ms' }).close()).not.toThrow();
  });

  it('refuses an unknown option and suggests the one meant', () => {
    const error = handlerOptionsError({ intervall: 500 });
    expect(error.option).toBe('intervall');
    expect(error.message).toContain('did you mean `interval`?');
  });

  it('serves defaultRegistry when given options alone, or nothing', () => {
    expect(() => createObservabilityHandler().close()).not.toThrow();
    expect(() => createObservabilityHandler({ basePath: '/ops' }).close()).not.toThrow();
    expect(() => createObservabilityHandler(undefined, { basePath: '/ops' }).close()).not.toThrow();
    expect(
      optionsError(() => createObservabilityHandler({ basePth: '/ops' } as never)).option,
    ).toBe('basePth');
  });

  it('refuses something that is neither a registry nor options', () => {
    for (const value of [42, 'registry', null, [], {}]) {
      const error = optionsError(() =>
        createObservabilityHandler(value as unknown as Registry, { basePath: '/ops' }),
      );
      expect(error.option).toBe('registry');
      expect(error.message).toMatch(/Expected `registry` to be a Registry, or the options alone/);
    }
    expect(optionsError(() => createObservabilityHandler(42 as never)).option).toBe('registry');
  });

  it('accepts the bounds of every range and a base path with or without its last slash', () => {
    for (const options of [
      { interval: 100, maxClients: 1, maxKeysPerName: 0 },
      { interval: 60_000, maxClients: 10_000, maxKeysPerName: 100_000 },
      { basePath: '/ops' },
      { basePath: '/ops/' },
      { basePath: '/' },
      { basePath: '/a/b-c/d_e' },
      { critical: [], collect: {} },
    ]) {
      expect(() => createObservabilityHandler(registry, options).close()).not.toThrow();
    }
  });
});
