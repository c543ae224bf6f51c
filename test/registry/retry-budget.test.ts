/** Retry budgets in a registry: config data, a retry's `budget` naming one, snapshot, reconfigure. */
import { describe, expect, it } from 'vitest';
import { pipeline, Registry, type RegistryInstanceSnapshot, RetryBudget } from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { issuesOf, resolved, thrownIssues } from '../support/config.js';

type BudgetEntry = Extract<RegistryInstanceSnapshot, { kind: 'retryBudget' }>;

describe('retry budgets from config data', () => {
  it('builds a named budget from defaults and its entry, durations with units', () => {
    const registry = new Registry({
      defaults: { retryBudget: { window: '20s' } },
      retryBudgets: { payments: { ratio: 0.1, minRetriesPerSecond: 5 } },
    });
    const budget = registry.retryBudget('payments');
    expect(budget).toBeInstanceOf(RetryBudget);
    expect(budget).toBe(registry.get('retryBudget', 'payments'));
    expect(resolved(budget)).toMatchObject({
      model: 'window',
      window: 20_000,
      ratio: 0.1,
      minRetriesPerSecond: 5,
      name: 'payments',
    });
  });

  it('gives the retries whose `budget` names it one shared budget', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        defaults: { retry: { delay: 1, jitter: 'none' } },
        retryBudgets: { payments: { model: 'tokens', maxTokens: 4 } },
        retries: { charge: { budget: 'payments' }, refund: { budget: 'payments' }, other: {} },
      },
      { clock },
    );
    const charge = registry.retry('charge');
    const refund = registry.retry('refund');
    expect(charge.budget).toBe(registry.retryBudget('payments'));
    expect(refund.budget).toBe(charge.budget);
    expect(registry.retry('other').budget).toBeUndefined();
    const fail = () => {
      throw new Error('down');
    };
    const a = pipeline(charge).tryExecute(fail);
    const b = pipeline(refund).tryExecute(fail);
    await clock.runAll();
    await Promise.all([a, b]);
    // 4 tokens, a failure costs one, retries only above 2: the first failure leaves 3 and is
    // retried; the other call's failure leaves 2 and is not, nor is the failed retry (1 left).
    expect(registry.retryBudget('payments').stats()).toMatchObject({
      calls: 2,
      allowed: 1,
      refused: 2,
      balance: 1,
    });
  });

  it('refuses a retry naming a budget the config does not define, naming the path and the budgets it does', () => {
    // A typo would otherwise split the budget: the retry would get a default budget of its own.
    expect(
      issuesOf({
        retryBudgets: { payments: {}, search: {} },
        retries: { r: { budget: 'paymnets' }, ok: { budget: 'payments' } },
      }),
    ).toEqual([
      {
        path: 'retries.r.budget',
        message:
          'names the retryBudget "paymnets", which the config does not define; its retryBudgets are "payments", "search"',
      },
    ]);
    expect(issuesOf({ defaults: { retry: { budget: 'shared' } } })).toEqual([
      {
        path: 'defaults.retry.budget',
        message:
          'names the retryBudget "shared", which the config does not define; its retryBudgets are none (add an entry under retryBudgets)',
      },
    ]);
  });

  it('a budget entry with no options of its own takes the defaults of retryBudget', () => {
    const registry = new Registry({
      defaults: { retryBudget: { model: 'concurrency' } },
      retryBudgets: { shared: {} },
      retries: { r: { budget: 'shared' } },
    });
    expect(registry.retry('r').budget).toBe(registry.retryBudget('shared'));
    expect(registry.retryBudget('shared').model).toBe('concurrency');
  });

  it('an entry of another model than the defaults keeps none of their model options', () => {
    const registry = new Registry({
      defaults: { retryBudget: { window: '5s', ratio: 0.1 } },
      retryBudgets: { grpc: { model: 'tokens', tokenRatio: 0.5 } },
    });
    expect(resolved(registry.retryBudget('grpc'))).toMatchObject({
      model: 'tokens',
      tokenRatio: 0.5,
    });
  });

  it('reports invalid budgets and references with their paths', () => {
    expect(
      issuesOf({
        retryBudgets: {
          zero: { ratio: 0, minRetriesPerSecond: 0 },
          wide: { window: '2m' },
          mixed: { maxTokens: 3 },
        },
        retries: { r: { budget: 3 }, s: { budget: '' } },
      }),
    ).toEqual([
      {
        path: 'retries.r.budget',
        message: 'expected the name of a `retryBudget` instance (a non-empty string), got 3',
      },
      {
        path: 'retries.s.budget',
        message: 'expected the name of a `retryBudget` instance (a non-empty string), got ""',
      },
      {
        path: 'retryBudgets.zero.ratio',
        message:
          'expected a number in (0, 1000] when `minRetriesPerSecond` is 0 (with both 0 the budget never allows a retry), got 0',
      },
      {
        path: 'retryBudgets.wide.window',
        message: 'expected a number of ms in [1000, 60000] (or a string like "30s"), got "2m"',
      },
      {
        path: 'retryBudgets.mixed.maxTokens',
        message: 'expected undefined: it applies to the "tokens" model, not to "window", got 3',
      },
    ]);
  });

  it('lists budgets in the snapshot with their state', async () => {
    const registry = new Registry({ retryBudgets: { b: {} }, retries: { r: { budget: 'b' } } });
    registry.retry('r');
    const entry = registry
      .snapshot()
      .instances.find((i): i is BudgetEntry => i.kind === 'retryBudget');
    expect(entry).toEqual({
      kind: 'retryBudget',
      name: 'b',
      stats: {
        model: 'window',
        balance: 10,
        calls: 0,
        active: 0,
        inFlight: 0,
        allowed: 0,
        refused: 0,
      },
    });
  });

  it('reconfigures a budget in place, and refuses to move a retry to another budget', () => {
    const registry = new Registry({
      retryBudgets: { b: { ratio: 0.2 } },
      retries: { r: { budget: 'b' } },
    });
    const budget = registry.retryBudget('b');
    registry.retry('r');
    registry.reconfigure({ retryBudgets: { b: { ratio: 0.5 } }, retries: { r: { budget: 'b' } } });
    expect(registry.retryBudget('b')).toBe(budget);
    expect(resolved(budget)).toMatchObject({ ratio: 0.5 });
    const issues = thrownIssues(() =>
      registry.reconfigure({ retryBudgets: { b: {}, c: {} }, retries: { r: { budget: 'c' } } }),
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('retries.r.budget');
    expect(issues[0]!.message).toMatch(/budget cannot change/);
  });
});
