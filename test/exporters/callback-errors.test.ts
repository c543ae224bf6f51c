import { Registry as PromRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { collectMetrics, type MetricFamily, prometheusText, Registry } from '../../src/index.js';
import { observeBreakwaterMetrics } from '../../src/opentelemetry/index.js';
import { registerBreakwaterMetrics } from '../../src/prometheus/index.js';
import { pointValue, startMetrics } from '../opentelemetry/reader.js';
import { throwInCallbacks } from '../support/callbackErrors.js';

const FAMILY = 'breakwater_callback_errors_total';

/** The count of `source` in `families` (0 before the first error of that source). */
function counted(families: MetricFamily[], source: string): number {
  const f = families.find((x) => x.name === FAMILY);
  if (f === undefined || f.type === 'histogram') return 0;
  return f.samples.find((s) => s.labels.source === source)?.value ?? 0;
}

describe('errors thrown by listeners and callbacks', () => {
  it('are counted by source in breakwater_callback_errors_total, on every exporter', async () => {
    const registry = new Registry();
    const before = collectMetrics(registry);
    await throwInCallbacks(); // one throwing state-change listener, one throwing `handle`
    const after = collectMetrics(registry);
    expect(counted(after, 'listener') - counted(before, 'listener')).toBe(1);
    expect(counted(after, 'callback') - counted(before, 'callback')).toBe(1);

    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, registry);
    const text = await prom.metrics();
    expect(text).toContain(`# TYPE ${FAMILY} counter`);
    expect(text).toContain(`${FAMILY}{source="listener"} ${counted(after, 'listener')}`);
    expect(prometheusText(after)).toContain(`${FAMILY}{source="callback"}`);

    const metrics = startMetrics();
    observeBreakwaterMetrics(metrics.meter, registry);
    const collected = await metrics.collect();
    expect(pointValue(collected, 'breakwater.callback.errors', { source: 'listener' })).toBe(
      counted(after, 'listener'),
    );
    await metrics.close();
  });
});
