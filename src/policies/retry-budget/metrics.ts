import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { RetryBudget } from './RetryBudget.js';

/** The metric families of retry budgets. */
export const retryBudgetFamilies = {
  calls: {
    name: 'breakwater_retry_budget_calls_total',
    type: 'counter',
    help: 'Calls started under the policies spending from a retry budget.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.retry_budget.calls', kind: 'counter' },
  },
  attempts: {
    name: 'breakwater_retry_budget_attempts_total',
    type: 'counter',
    help: 'Extra attempts (retries, hedges) asked of a retry budget, by result.',
    labels: ['name', 'key', 'result'],
    unit: '{attempt}',
    otel: { name: 'breakwater.retry_budget.attempts', kind: 'counter' },
  },
  balance: {
    name: 'breakwater_retry_budget_balance',
    type: 'gauge',
    help: 'What a retry budget has left: extra attempts it would grant now, or its tokens (model tokens).',
    labels: ['name', 'key'],
    unit: '1',
    otel: { name: 'breakwater.retry_budget.balance', kind: 'upDownCounter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one retry budget series. */
export interface RetryBudgetCounts {
  calls: number;
  allowed: number;
  refused: number;
  balance: number;
}

/** @internal How retry budgets report into their families. */
export const retryBudgetMetrics: KindMetrics<RetryBudget, RetryBudgetCounts> = {
  families: Object.values(retryBudgetFamilies),
  counts: () => ({ calls: 0, allowed: 0, refused: 0, balance: 0 }),
  add(c, budget) {
    const s = budget.stats();
    c.calls += s.calls;
    c.allowed += s.allowed;
    c.refused += s.refused;
    c.balance += s.balance;
  },
  addCounts(c, other) {
    c.calls += other.calls;
    c.allowed += other.allowed;
    c.refused += other.refused;
    c.balance += other.balance;
  },
  isEmpty: (c) => c.calls + c.allowed + c.refused === 0,
  series(sink, name, key, c) {
    const labels = { name, key };
    sink.add(retryBudgetFamilies.calls, labels, c.calls);
    sink.add(retryBudgetFamilies.attempts, { name, key, result: 'allowed' }, c.allowed);
    sink.add(retryBudgetFamilies.attempts, { name, key, result: 'refused' }, c.refused);
    sink.add(retryBudgetFamilies.balance, labels, c.balance);
  },
};
