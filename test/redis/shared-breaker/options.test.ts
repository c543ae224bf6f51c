/**
 * Options of shared breaker signals that need no server: the identity an instance takes by
 * default (from the host and its slot, surviving a restart), the ids that never come from a
 * seeded random source, and the limits of names, prefixes and the probe lease.
 */
import { hostname } from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CircuitBreaker, OptionsError } from '../../../src/index.js';
import { type SharedSignalsOptions, sharedSignals } from '../../../src/redis/index.js';

const client = {
  evalsha: async () => [0, 0],
  eval: async () => [0, 0],
  scriptLoad: async () => '',
};

function signals(options: Partial<SharedSignalsOptions> = {}) {
  return sharedSignals(new CircuitBreaker({ name: 'opts' }), {
    client,
    subscriber: false,
    pollInterval: 60_000,
    ...options,
  });
}

function refusal(options: object): OptionsError {
  try {
    signals(options).dispose();
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return error as OptionsError;
  }
  throw new Error('accepted');
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('the default identity', () => {
  it('is the host name and PM2 slot (NODE_APP_INSTANCE): the same after a restart', () => {
    vi.stubEnv('NODE_APP_INSTANCE', '3');
    const s = signals();
    expect(s.instance).toBe(`${hostname()}/3`);
    s.dispose();
  });

  it('is the host name alone without a slot: processes of one host count as one instance', () => {
    vi.stubEnv('NODE_APP_INSTANCE', '');
    const [a, b] = [signals(), signals()];
    expect(a.instance).toBe(hostname());
    expect(b.instance).toBe(a.instance);
    a.dispose();
    b.dispose();
  });

  it('is random on a runtime without node:os, and never drawn from Math.random (seeded alike in every process)', () => {
    vi.stubGlobal('process', { ...process, getBuiltinModule: undefined });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const ids = new Set<string>();
    for (const crypto of [globalThis.crypto, {}]) {
      vi.stubGlobal('crypto', crypto);
      for (let i = 0; i < 3; i++) {
        const s = signals();
        ids.add(s.instance);
        s.dispose();
      }
    }
    expect(ids.size).toBe(6);
    expect(Math.random).not.toHaveBeenCalled();
  });

  it('an instance given is kept as it is', () => {
    const s = signals({ instance: 'pod-7' });
    expect(s.instance).toBe('pod-7');
    s.dispose();
  });
});

describe('limits', () => {
  it.each([
    ['name', '1025 characters', { name: 'n'.repeat(1025) }, 'n'.repeat(1025), 'at most 1024'],
    ['prefix', '1025 characters', { prefix: 'p'.repeat(1025) }, 'p'.repeat(1025), 'at most 1024'],
    ['probeLease', '100 ms, timeout 200 ms', { probeLease: 100, timeout: 200 }, 100, '(200 ms)'],
    ['probeLease', 'default, timeout 20 s', { timeout: 20_000 }, 10_000, '(20000 ms)'],
  ])(
    '%s of %s is refused with an OptionsError naming the field, the value and the range',
    (field, _, options, value, range) => {
      const error = refusal(options);
      expect(error.option).toBe(field);
      expect(error.value).toBe(value);
      expect(error.message).toContain(`\`${field}\``);
      expect(error.message).toContain(range);
    },
  );

  it('a name and a prefix of 1024 characters, and a lease as long as the timeout, are accepted', () => {
    const s = signals({
      name: 'n'.repeat(1024),
      prefix: 'p'.repeat(1024),
      probeLease: 200,
      timeout: 200,
    });
    expect(s.keys.state.length).toBeGreaterThan(2048);
    s.dispose();
  });
});
