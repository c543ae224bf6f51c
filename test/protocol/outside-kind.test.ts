/**
 * A policy kind defined in test/support alone (a concurrency cap, see concurrencyCapKind.ts),
 * given to a registry with its `kinds` option, is used like the library's own kinds: by name
 * and by key, from config data with errors named by path, in pipelines, snapshots,
 * reconfiguration and registration.
 */
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  circuitBreakerKind,
  OptionsError,
  pipeline,
  Registry,
  type RegistryConfig,
  UsageError,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import {
  CapReachedError,
  ConcurrencyCap,
  concurrencyCapKind,
  resolveCapOptions,
} from '../support/concurrencyCapKind.js';
import { errorOf } from '../support/errors.js';

const config = {
  defaults: { concurrencyCap: { limit: 2, cooldown: '2s' } },
  concurrencyCaps: { db: { limit: 1 } },
  circuitBreakers: { db: { breakDuration: '5s' } },
} as unknown as RegistryConfig;

function makeRegistry(clock = new ManualClock()) {
  return new Registry(config, { clock, kinds: [concurrencyCapKind] });
}

describe('a policy kind defined outside the library, in a registry', () => {
  it('builds one named instance from its config entry over its defaults, durations read', () => {
    const registry = makeRegistry();
    const db = registry.get(concurrencyCapKind, 'db');
    expect(db).toBeInstanceOf(ConcurrencyCap);
    expect(db.o).toMatchObject({ limit: 1, cooldown: 2_000, name: 'db' });
    expect(registry.get(concurrencyCapKind, 'db')).toBe(db);
    expect(registry.get('concurrencyCap', 'db')).toBe(db);
    // A name without an entry gets the defaults; the kinds' names are apart.
    expect(registry.get(concurrencyCapKind, 'search').o).toMatchObject({ limit: 2 });
    expect(registry.circuitBreaker('db')).not.toBe(db);
    registry.dispose();
  });

  it('builds one instance per key under a name, and evicts none that has calls in flight', () => {
    const registry = new Registry(config, {
      clock: new ManualClock(),
      kinds: [concurrencyCapKind],
    });
    const a = registry.getKeyed(concurrencyCapKind, 'db', 'tenant-a');
    expect(a.name).toBe('db:tenant-a');
    expect(a.o.limit).toBe(1);
    expect(registry.getKeyed(concurrencyCapKind, 'db', 'tenant-a')).toBe(a);
    expect(registry.getKeyed(concurrencyCapKind, 'db', 'tenant-b')).not.toBe(a);
    registry.dispose();
  });

  it('runs in a pipeline with its own refusal', async () => {
    const registry = makeRegistry();
    const p = pipeline(registry.get(concurrencyCapKind, 'db'));
    let release!: () => void;
    const held = p.execute(() => new Promise<void>((r) => (release = r)));
    const refused = await p.tryExecute(() => 'second');
    expect(refused.ok === false && refused.error).toBeInstanceOf(CapReachedError);
    release();
    await held;
    await expect(p.execute(() => 'third')).resolves.toBe('third');
    registry.dispose();
  });

  it('reports bad config data by path, with the kind’s own limits', () => {
    const issues = errorOf(
      ConfigError,
      () =>
        new Registry(
          {
            defaults: { concurrencyCap: { cooldown: '2 s' } },
            concurrencyCaps: { db: { limit: 0 }, api: { limt: 3 } },
          } as unknown as RegistryConfig,
          { kinds: [concurrencyCapKind] },
        ),
    ).issues;
    expect(issues.map((i) => i.path).sort()).toEqual([
      'concurrencyCaps.api.limt',
      'concurrencyCaps.db.limit',
      'defaults.concurrencyCap.cooldown',
    ]);
    const message = (path: string) => issues.find((i) => i.path === path)!.message;
    expect(message('concurrencyCaps.db.limit')).toContain('an integer in [1, 1000]');
    expect(message('concurrencyCaps.db.limit')).toContain('got 0');
    expect(message('concurrencyCaps.api.limt')).toContain('did you mean `limit`');
  });

  it('is unknown to a registry not given it: its config section is refused', () => {
    const issues = errorOf(ConfigError, () => new Registry(config)).issues;
    expect(issues.map((i) => i.path)).toEqual(['defaults.concurrencyCap', 'concurrencyCaps']);
    const registry = new Registry();
    expect(() => registry.get(concurrencyCapKind, 'db')).toThrow(UsageError);
  });

  it('refuses a kind whose name or section another kind or config key uses', () => {
    const clash = { ...concurrencyCapKind, section: circuitBreakerKind.section };
    const error = errorOf(OptionsError, () => new Registry({}, { kinds: [clash] }));
    expect(error.option).toBe('kinds[0].section');
    expect(error.value).toBe('circuitBreakers');
    const reserved = { ...concurrencyCapKind, name: 'keys' };
    expect(errorOf(OptionsError, () => new Registry({}, { kinds: [reserved] })).option).toBe(
      'kinds[0].name',
    );
  });

  it('lists its named and keyed instances in snapshot(), with their state and stats', () => {
    const registry = makeRegistry();
    registry.get(concurrencyCapKind, 'db').stop();
    registry.getKeyed(concurrencyCapKind, 'db', 'tenant-a');
    const caps = registry
      .snapshot()
      .instances.filter((i) => (i.kind as string) === 'concurrencyCap');
    expect(caps).toEqual([
      {
        kind: 'concurrencyCap',
        name: 'db',
        state: 'stopped',
        stats: { inFlight: 0, limit: 1, admitted: 0, refused: 0 },
      },
      {
        kind: 'concurrencyCap',
        name: 'db',
        key: 'tenant-a',
        state: 'accepting',
        stats: { inFlight: 0, limit: 1, admitted: 0, refused: 0 },
      },
    ]);
    registry.dispose();
  });

  it('takes new settings from reconfigure(), named and keyed, or none when they are invalid', () => {
    const registry = makeRegistry();
    const db = registry.get(concurrencyCapKind, 'db');
    const a = registry.getKeyed(concurrencyCapKind, 'db', 'a');
    expect(() =>
      registry.reconfigure({
        concurrencyCaps: { db: { limit: 5000 } },
      } as unknown as RegistryConfig),
    ).toThrow(ConfigError);
    expect(db.o.limit).toBe(1);
    registry.reconfigure({ concurrencyCaps: { db: { limit: 7 } } } as unknown as RegistryConfig);
    expect(db.o.limit).toBe(7);
    expect(a.o.limit).toBe(7);
    registry.dispose();
  });

  it('registers an instance built in code, once per name, and disposes it with the registry', () => {
    const registry = makeRegistry();
    const own = new ConcurrencyCap(resolveCapOptions({ limit: 3, name: 'own' }));
    registry.register('own', own);
    expect(registry.get(concurrencyCapKind, 'own')).toBe(own);
    const again = errorOf(UsageError, () => registry.register('own', own));
    expect(again.message).toContain('already has a concurrency cap named "own"');
    registry.dispose();
    expect(own.disposed).toBe(true);
  });
});
