/**
 * Config data is read for the kinds it is given: their sections, defaults, schemas, merge
 * rules, duration fields and messages come from their descriptors, the library's own and a
 * kind defined here.
 */
import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../../src/errors/OptionsError.js';
import { POLICY_KINDS, type PolicyKindConfigs } from '../../../src/policies/kinds.js';
import {
  type AnyPolicyKind,
  configSchema,
  type KindConfigTypes,
  type OptionsData,
  type PolicyKindDescriptor,
} from '../../../src/protocol/kind.js';
import { ConfigError } from '../../../src/registry/ConfigError.js';
import type { RegistryConfig } from '../../../src/registry/config/types.js';
import { optionsFor, validateConfig } from '../../../src/registry/config/validate.js';
import { errorOf } from '../../support/errors.js';

const MAX_MS = 2_147_483_647;

/** A hedging policy as a kind defined outside the library would describe it (options only). */
interface HedgeOptions {
  readonly maxHedges: number;
  readonly delay: number;
  readonly budget: { readonly ratio: number; readonly period: number };
  readonly trigger:
    | { readonly kind: 'fixed'; readonly after: number }
    | { readonly kind: 'percentile'; readonly percentile: number; readonly minSamples: number };
}

function check(ok: boolean, option: string, value: unknown, expected: string): void {
  if (!ok) throw new OptionsError(option, value, expected);
}
const isIn = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && v >= min && v <= max;
const isInt = (v: unknown, min: number, max: number): v is number =>
  Number.isInteger(v) && isIn(v, min, max);

function resolveHedge(o: OptionsData): HedgeOptions {
  check(isInt(o.maxHedges, 1, 10), 'maxHedges', o.maxHedges, 'an integer in [1, 10]');
  const delay = o.delay ?? 100;
  check(isIn(delay, 1, MAX_MS), 'delay', delay, `a number of ms in [1, ${MAX_MS}]`);
  const b = (o.budget ?? {}) as OptionsData;
  const ratio = b.ratio ?? 0.1;
  check(isIn(ratio, 0.001, 1), 'budget.ratio', ratio, 'a number in [0.001, 1]');
  const period = b.period ?? 10_000;
  check(isIn(period, 1, MAX_MS), 'budget.period', period, `a number of ms in [1, ${MAX_MS}]`);
  const t = (o.trigger ?? {}) as OptionsData;
  const kind = t.kind ?? 'fixed';
  check(kind === 'fixed' || kind === 'percentile', 'trigger.kind', kind, '"fixed" or "percentile"');
  let trigger: HedgeOptions['trigger'];
  if (kind === 'fixed') {
    const after = t.after ?? delay;
    check(
      isIn(after, delay as number, MAX_MS),
      'trigger.after',
      after,
      `a number of ms in [${delay}, ${MAX_MS}]`,
    );
    trigger = { kind: 'fixed', after: after as number };
  } else {
    check(isIn(t.percentile, 1, 99.9), 'trigger.percentile', t.percentile, 'a number in [1, 99.9]');
    const minSamples = t.minSamples ?? 100;
    check(
      isInt(minSamples, 1, 1e6),
      'trigger.minSamples',
      minSamples,
      'an integer in [1, 1000000]',
    );
    trigger = {
      kind: 'percentile',
      percentile: t.percentile as number,
      minSamples: minSamples as number,
    };
  }
  return {
    maxHedges: o.maxHedges as number,
    delay: delay as number,
    budget: { ratio: ratio as number, period: period as number },
    trigger,
  };
}

class Hedge {
  constructor(readonly options: HedgeOptions) {}
}

const hedgeKind: PolicyKindDescriptor<Hedge, HedgeOptions> = {
  name: 'backup',
  label: 'hedging policy',
  section: 'backups',
  is: (value): value is Hedge => value instanceof Hedge,
  create: (options) => new Hedge(resolveHedge(options as OptionsData)),
  resolve: resolveHedge,
  reconfigure: () => () => {},
  dispose: () => {},
  view: (backup) => ({ stats: backup.options }),
  config: {
    schema: configSchema([
      ['maxHedges', 'value'],
      ['delay', 'duration'],
      [
        'budget',
        configSchema([
          ['ratio', 'value'],
          ['period', 'duration'],
        ]),
      ],
      [
        'trigger',
        {
          fields: configSchema([
            ['kind', 'value'],
            ['after', 'duration'],
            ['percentile', 'value'],
            ['minSamples', 'value'],
          ]),
          variants: new Map([
            ['fixed', ['kind', 'after']],
            ['percentile', ['kind', 'percentile', 'minSamples']],
          ]),
        },
      ],
    ]),
    codeOnly: ['onHedge'],
    // Defaults may leave `maxHedges` to each entry.
    check: (data) => resolveHedge({ ...data, maxHedges: data.maxHedges ?? 1 }),
    missing: (data, { entry, defaults, section }) =>
      data.maxHedges === undefined
        ? {
            option: 'maxHedges',
            message: entry
              ? `is required: neither this entry nor \`${defaults}\` sets it`
              : `is required: no \`${section}\` entry and no \`${defaults}\``,
          }
        : undefined,
    dependsOn: new Map([['trigger.after', ['delay']]]),
  },
};

const KINDS: readonly AnyPolicyKind[] = [...POLICY_KINDS, hedgeKind];

const issuesOf = (config: unknown, kinds = KINDS) =>
  errorOf(ConfigError, () => validateConfig(config, kinds)).issues;

const kind = (name: string): AnyPolicyKind => KINDS.find((k) => k.name === name)!;

describe('config data of the library kinds', () => {
  it('reads defaults by kind name and named entries by section, merged by each kind’s rules', () => {
    const config = validateConfig(
      {
        defaults: {
          circuitBreaker: {
            breakBackoff: { multiplier: 2, maxDuration: '1m' },
            window: { kind: 'count', size: 20, minimumCalls: 5 },
          },
          rateLimiter: { limit: 10, period: '1s', burst: 5 },
        },
        circuitBreakers: {
          merged: { breakBackoff: { multiplier: 3 }, window: { size: 50 } },
          replaced: { window: { kind: 'consecutive', threshold: 3 } },
        },
        rateLimiters: { bucket: { capacity: 4, refillRate: 2 } },
        keys: { idleTimeout: 'Infinity' },
      },
      POLICY_KINDS,
    );
    expect([...config.defaults.keys()]).toEqual(POLICY_KINDS.map((k) => k.name));
    const breakers = config.named.get('circuitBreaker')!;
    expect(breakers.get('merged')).toEqual({
      breakBackoff: { multiplier: 3, maxDuration: 60_000 },
      window: { kind: 'count', size: 50, minimumCalls: 5 },
    });
    expect(breakers.get('replaced')).toMatchObject({
      window: { kind: 'consecutive', threshold: 3 },
    });
    expect(config.named.get('rateLimiter')!.get('bucket')).toEqual({ capacity: 4, refillRate: 2 });
    expect(config.keys).toEqual({
      maxKeys: 10_000,
      idleTimeout: Number.POSITIVE_INFINITY,
      hardMaxKeys: 20_000,
    });
  });

  it('keeps each kind’s messages: code-only options, window kinds, missing timeout and rate', () => {
    expect(
      issuesOf(
        {
          defaults: { bulkhead: { handle: 'x' } },
          circuitBreakers: { c: { window: { kind: 'consecutive', size: 5 } } },
          timeouts: { t: { strategy: 'aggressive' } },
          rateLimiters: { r: { capacity: 5 } },
        },
        POLICY_KINDS,
      ),
    ).toEqual([
      {
        path: 'defaults.bulkhead.handle',
        message:
          'cannot be set in config data: build the policy in code with it and add it with `registry.register`',
      },
      {
        path: 'circuitBreakers.c.window.size',
        message: 'is not an option of a `consecutive` window; its options are `kind`, `threshold`',
      },
      {
        path: 'timeouts.t.timeout',
        message: 'is required: neither this entry nor `defaults.timeout` sets a timeout',
      },
      {
        path: 'rateLimiters.r.refillRate',
        message:
          'is required with `capacity`: neither this entry nor `defaults.rateLimiter` sets it',
      },
    ]);
    const config = validateConfig({}, POLICY_KINDS);
    expect(errorOf(ConfigError, () => optionsFor(config, kind('timeout'), 'x')).issues).toEqual([
      {
        path: 'timeouts.x.timeout',
        message:
          'is required: there is no `timeouts` entry for this name and `defaults.timeout` sets no timeout',
      },
    ]);
    expect(errorOf(ConfigError, () => optionsFor(config, kind('rateLimiter'), 'x')).issues).toEqual(
      [
        {
          path: 'rateLimiters.x.limit',
          message:
            'is required (a rate: `limit`, or `capacity` and `refillRate`): there is no `rateLimiters` entry for this name and `defaults.rateLimiter` does not set it',
        },
      ],
    );
  });

  it('types each section of RegistryConfig from PolicyKindConfigs, whose names match the kinds', () => {
    const sections: { [N in keyof PolicyKindConfigs]: PolicyKindConfigs[N]['section'] } = {
      circuitBreaker: 'circuitBreakers',
      retry: 'retries',
      retryBudget: 'retryBudgets',
      timeout: 'timeouts',
      bulkhead: 'bulkheads',
      rateLimiter: 'rateLimiters',
      loadShedder: 'loadShedders',
      adaptiveLimit: 'adaptiveLimits',
      hedge: 'hedges',
      coalesce: 'coalescers',
      chaos: 'chaosSteps',
    };
    expect(sections).toEqual(Object.fromEntries(POLICY_KINDS.map((k) => [k.name, k.section])));
    const config: RegistryConfig = {
      defaults: { timeout: { strategy: 'aggressive' } },
      timeouts: { t: { timeout: '1s' } },
      // @ts-expect-error a misspelt option of a library kind is a type error
      retries: { r: { maxAtempts: 3 } },
    };
    const misspelt: RegistryConfig = {
      // @ts-expect-error a misspelt section is a type error
      bulkhead: {},
    };
    const noDuration: RegistryConfig = {
      // @ts-expect-error a timeout entry needs its duration, which only the defaults may leave out
      timeouts: { t: { strategy: 'aggressive' } },
    };
    expect([config, misspelt, noDuration]).toHaveLength(3);
  });
});

describe('config data of a kind defined outside the library', () => {
  it('reads its defaults and section, with nested objects and its variants merged', () => {
    const config = validateConfig(
      {
        defaults: {
          backup: {
            delay: '50ms',
            budget: { ratio: 0.2, period: '30s' },
            trigger: { kind: 'fixed', after: '80ms' },
          },
        },
        backups: {
          same: { maxHedges: 2, budget: { ratio: 0.5 }, trigger: { after: '100ms' } },
          other: { maxHedges: 3, trigger: { kind: 'percentile', percentile: 95 } },
        },
      },
      KINDS,
    );
    expect(config.defaults.get('backup')).toEqual({
      delay: 50,
      budget: { ratio: 0.2, period: 30_000 },
      trigger: { kind: 'fixed', after: 80 },
    });
    const backups = config.named.get('backup')!;
    expect(backups.get('same')).toEqual({
      maxHedges: 2,
      delay: 50,
      budget: { ratio: 0.5, period: 30_000 },
      trigger: { kind: 'fixed', after: 100 },
    });
    expect(backups.get('other')).toEqual({
      maxHedges: 3,
      delay: 50,
      budget: { ratio: 0.2, period: 30_000 },
      trigger: { kind: 'percentile', percentile: 95 },
    });
    expect(optionsFor(config, hedgeKind, 'same')).toBe(backups.get('same'));
    expect(resolveHedge(optionsFor(config, hedgeKind, 'other')).trigger).toEqual({
      kind: 'percentile',
      percentile: 95,
      minSamples: 100,
    });
  });

  it('names each bad value by its path, with the kind’s own ranges and messages', () => {
    expect(
      issuesOf({
        backup: {},
        defaults: {
          backups: {},
          backup: {
            budget: { perod: '1s' },
            delay: 'soon',
            trigger: { kind: 'fixed', after: 120 },
          },
        },
        backups: {
          a: {
            maxHedges: 11,
            onHedge: 'log',
            trigger: { kind: 'fixed', minSamples: 5 },
            budget: { ratio: 2, period: '1 m' },
          },
          b: { trigger: { after: 20 } },
          c: { maxHedges: 1, delay: 0, trigger: { after: 5 } },
          d: { maxHedges: 1, delay: 500 },
        },
      }),
    ).toEqual([
      { path: 'backup', message: 'is not a known key (did you mean `backups`?)' },
      { path: 'defaults.backups', message: 'is not a known policy kind (did you mean `backup`?)' },
      {
        path: 'defaults.backup.budget.perod',
        message: 'is not a known option (did you mean `period`?)',
      },
      {
        path: 'defaults.backup.delay',
        message: expect.stringMatching(/^expected a duration: .*, got "soon"$/),
      },
      {
        path: 'backups.a.onHedge',
        message:
          'cannot be set in config data: build the policy in code with it and add it with `registry.register`',
      },
      {
        path: 'backups.a.trigger.minSamples',
        message: 'is not an option of a `fixed` trigger; its options are `kind`, `after`',
      },
      {
        path: 'backups.a.budget.period',
        message: expect.stringMatching(/^expected a duration: .*, got "1 m"$/),
      },
      { path: 'backups.a.maxHedges', message: 'expected an integer in [1, 10], got 11' },
      { path: 'backups.a.budget.ratio', message: 'expected a number in [0.001, 1], got 2' },
      {
        path: 'backups.b.maxHedges',
        message: 'is required: neither this entry nor `defaults.backup` sets it',
      },
      {
        path: 'backups.b.trigger.after',
        message: 'expected a number of ms in [100, 2147483647] (or a string like "30s"), got 20',
      },
      // `trigger.after` depends on `delay`: not reported again once `delay` is found invalid.
      {
        path: 'backups.c.delay',
        message: 'expected a number of ms in [1, 2147483647] (or a string like "30s"), got 0',
      },
      {
        path: 'backups.d.trigger.after',
        message:
          'expected a number of ms in [500, 2147483647] (or a string like "30s"), got 120 (from `defaults.backup.trigger.after`)',
      },
    ]);
  });

  it('gives its message for a name with no entry when its defaults lack a required option', () => {
    const config = validateConfig({ defaults: { backup: { delay: 10 } } }, KINDS);
    expect(errorOf(ConfigError, () => optionsFor(config, hedgeKind, 'x')).issues).toEqual([
      {
        path: 'backups.x.maxHedges',
        message: 'is required: no `backups` entry and no `defaults.backup`',
      },
    ]);
  });

  it('is an unknown section and kind when the registry is not given it', () => {
    expect(issuesOf({ defaults: { backup: {} }, backups: {} }, POLICY_KINDS)).toEqual([
      {
        path: 'defaults.backup',
        message:
          'is not a known policy kind; known policy kinds are `circuitBreaker`, `retry`, `retryBudget`, `timeout`, `bulkhead`, `rateLimiter`, `loadShedder`, `adaptiveLimit`, `hedge`, `coalesce`, `chaos`',
      },
      {
        path: 'backups',
        message:
          'is not a known key; known keys are `defaults`, `circuitBreakers`, `retries`, `retryBudgets`, `timeouts`, `bulkheads`, `rateLimiters`, `loadShedders`, `adaptiveLimits`, `hedges`, `coalescers`, `chaosSteps`, `keys`',
      },
    ]);
  });

  it('types its section through RegistryConfig’s parameter, still catching misspelt keys', () => {
    type HedgeConfig = { maxHedges?: number; delay?: number | string };
    const config: RegistryConfig<{ backup: KindConfigTypes<'backups', HedgeConfig> }> = {
      defaults: { backup: { delay: '10ms' }, retry: { maxAttempts: 2 } },
      backups: {
        a: { maxHedges: 2 },
        // @ts-expect-error a misspelt option of the outside kind is a type error
        b: { delai: 1 },
      },
    };
    const plain: RegistryConfig = config;
    expect(plain).toBeDefined();
  });
});
