import { channel } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { circuitBreaker, diagnosticsChannels, pipeline, Registry } from '../../src/index.js';
import { instrumentBreakwater } from '../../src/opentelemetry/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { optionsError } from '../support/errors.js';
import { type Metrics, pointValue, startMetrics } from './reader.js';
import { startTracing, type Tracing } from './tracing.js';

let metrics: Metrics;
let tracing: Tracing;

beforeEach(() => {
  metrics = startMetrics();
  tracing = startTracing();
});

afterEach(async () => {
  await metrics.close();
  await tracing.close();
});

const subscribed = () =>
  [diagnosticsChannels.retry, diagnosticsChannels.rejected, diagnosticsChannels.stateChange].map(
    (name) => channel(name).hasSubscribers,
  );

describe('instrumentBreakwater', () => {
  it('reports the registry metrics and adds span events, and stops both on dispose', async () => {
    const clock = new ManualClock();
    const registry = new Registry({}, { clock });
    registry.register(
      'orders',
      circuitBreaker({ name: 'orders', window: { kind: 'consecutive', threshold: 1 }, clock }),
    );
    const stop = instrumentBreakwater({ meter: metrics.meter, registry });
    expect(subscribed()).toEqual([true, true, true]);

    await tracing.tracer.startActiveSpan('place-order', async (span) => {
      await pipeline(registry.circuitBreaker('orders')).tryExecute(() => {
        throw new Error('down');
      });
      span.end();
    });
    expect(tracing.span('place-order').events.map((e) => e.name)).toEqual([
      'breakwater.circuit_breaker.state_change',
    ]);
    const open = { 'breakwater.policy.name': 'orders', state: 'open' };
    expect(pointValue(await metrics.collect(), 'breakwater.circuit_breaker.state', open)).toBe(1);

    stop();
    stop();
    expect(subscribed()).toEqual([false, false, false]);
    registry.dispose();
  });

  it('reports defaultRegistry, with the named policies built in code, when given a meter alone', async () => {
    const inventory = circuitBreaker({ name: 'inventory' });
    inventory.forceOpen();
    const stop = instrumentBreakwater({ meter: metrics.meter, tracing: false });
    const forced = { 'breakwater.policy.name': 'inventory', state: 'forced-open' };
    expect(pointValue(await metrics.collect(), 'breakwater.circuit_breaker.state', forced)).toBe(1);
    stop();
  });

  it('adds no span events with tracing: false', () => {
    const stop = instrumentBreakwater({
      meter: metrics.meter,
      registry: new Registry(),
      tracing: false,
    });
    expect(subscribed()).toEqual([false, false, false]);
    stop();
  });

  it('adds span events alone when given no meter', () => {
    const stop = instrumentBreakwater({});
    expect(subscribed()).toEqual([true, true, true]);
    stop();
    expect(subscribed()).toEqual([false, false, false]);
  });

  it('throws OptionsError naming the option, subscribing to nothing', () => {
    const cases: [() => unknown, string][] = [
      [() => instrumentBreakwater(undefined as never), 'options'],
      [() => instrumentBreakwater({ registry: new Registry() }), 'meter'],
      [() => instrumentBreakwater({ meter: metrics.meter, registry: {} as never }), 'registry'],
      [() => instrumentBreakwater({ tracing: 'yes' as never }), 'tracing'],
      [() => instrumentBreakwater({ trace: true } as never), 'trace'],
      [
        () =>
          instrumentBreakwater({
            meter: metrics.meter,
            registry: new Registry(),
            collect: { maxKeysPerName: -1 },
          }),
        'collect.maxKeysPerName',
      ],
      [
        () =>
          instrumentBreakwater({
            meter: metrics.meter,
            registry: new Registry(),
            collect: 5 as never,
          }),
        'collect',
      ],
    ];
    for (const [instrument, option] of cases) {
      expect(optionsError(instrument).option).toBe(option);
    }
    expect(subscribed()).toEqual([false, false, false]);
  });
});
