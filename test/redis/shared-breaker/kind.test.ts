/**
 * Shared breaker signals as a registry sees them, on a real Redis server: their kind in the
 * snapshot, /metrics, /health and the dashboard row; Redis away shows as degraded (never a
 * 503); bad options are refused at construction with the field, the value and the range.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  ConfigError,
  collectMetrics,
  OptionsError,
  prometheusText,
  Registry,
  UsageError,
} from '../../../src/index.js';
import { createObservabilityHandler } from '../../../src/observability/index.js';
import { probeGateOf } from '../../../src/policies/circuit-breaker/shared.js';
import { sharedSignals, sharedSignalsKind } from '../../../src/redis/index.js';
import { sleep } from '../../support/async.js';
import { ioredisFactory } from '../../support/redis-clients.js';
import { describeRedis } from '../../support/redis-server.js';

async function get(
  handler: ReturnType<typeof createObservabilityHandler>,
  path: string,
): Promise<{ status: number; body: string }> {
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: await res.text() };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describeRedis('shared breaker signals in a registry', (redis) => {
  it('in the snapshot (state open once a quorum reported), /metrics, /health and the dashboard row; Redis away: local-only, degraded with 200', async () => {
    const connected = await ioredisFactory.connect(redis().port);
    const registry = new Registry();
    const breaker = new CircuitBreaker({
      name: `kind-${process.pid}`,
      window: { kind: 'consecutive', threshold: 1 },
      breakDuration: 60_000,
    });
    // A deadline far above a reply's time on a busy machine: a report past its deadline would
    // not be counted here though Redis ran it (the poll would then show the shared open first).
    const signals = sharedSignals(breaker, {
      client: connected.client,
      quorum: 1,
      timeout: 5_000,
      onWarning: () => {},
    });
    registry.register('payments', breaker);
    registry.register('payments-shared', signals);
    try {
      await signals.sync();
      expect(registry.snapshot().instances).toContainEqual(
        expect.objectContaining({ name: 'payments-shared', state: 'closed' }),
      );
      breaker.trip();
      const t0 = Date.now();
      while (signals.stats().reports === 0 && Date.now() - t0 < 15_000) await sleep(5);
      const entry = registry
        .snapshot()
        .instances.find((i) => (i.kind as string) === 'sharedSignals');
      expect(entry).toMatchObject({
        name: 'payments-shared',
        state: 'open',
        stats: { sharedOpen: true, storeAvailable: true, reports: 1 },
      });
      expect(sharedSignalsKind.dashboard?.(entry!).detail).toMatch(
        /^shared open for \d+ ms more, 1 reports/,
      );
      const text = prometheusText(collectMetrics(registry));
      expect(text).toContain('breakwater_shared_breaker_open{name="payments-shared",key=""} 1');
      expect(text).toContain(
        'breakwater_shared_breaker_store_available{name="payments-shared",key=""} 1',
      );
      const handler = createObservabilityHandler(registry);
      await redis().kill();
      await signals.sync();
      expect(registry.snapshot().instances).toContainEqual(
        expect.objectContaining({ name: 'payments-shared', state: 'local-only' }),
      );
      expect(prometheusText(collectMetrics(registry))).toContain(
        'breakwater_shared_breaker_store_available{name="payments-shared",key=""} 0',
      );
      const health = await get(handler, '/health');
      // Redis away is no reason for a 503.
      expect(health.status).toBe(200);
      const body = JSON.parse(health.body) as { status: string; instances: object[] };
      expect(body.status).not.toBe('ok');
      expect(body.instances).toContainEqual(
        expect.objectContaining({
          kind: 'sharedSignals',
          name: 'payments-shared',
          state: 'local-only',
        }),
      );
      handler.close();
    } finally {
      registry.dispose();
      await connected.close();
      await redis().restart();
    }
  });
});

describe('sharedSignalsKind', () => {
  it('builds no instance from config data: the name asked for says to attach signals in code and register them', () => {
    const registry = new Registry({}, { kinds: [sharedSignalsKind] });
    expect(() => registry.get(sharedSignalsKind, 'payments')).toThrow(ConfigError);
    expect(() => registry.get(sharedSignalsKind, 'payments')).toThrow(/registry\.register/);
    registry.dispose();
  });
});

describe('sharedSignals options', () => {
  const client = {
    evalsha: async () => [0, 0],
    eval: async () => [0, 0],
    scriptLoad: async () => '',
  };
  const breaker = () => new CircuitBreaker({ name: 'opts' });

  it.each([
    [{ client: {} }, 'client'],
    [{ client, quorum: 0 }, 'quorum'],
    [{ client, quorum: 1.5 }, 'quorum'],
    [{ client, quorum: { share: 0 } }, 'quorum.share'],
    [{ client, quorum: { share: 1.5 } }, 'quorum.share'],
    [{ client, quorum: { share: 0.5, min: 0 } }, 'quorum.min'],
    [{ client, quorum: { share: 0.5, mni: 2 } }, 'quorum.mni'],
    [{ client, pollInterval: 5 }, 'pollInterval'],
    [{ client, probeLease: 0 }, 'probeLease'],
    [{ client, timeout: -1 }, 'timeout'],
    [{ client, name: 'a{b}' }, 'name'],
    [{ client, prefix: '{x' }, 'prefix'],
    [{ client, instance: 'has space' }, 'instance'],
    [{ client, subscriber: {} }, 'subscriber'],
    [{ client, qourum: 2 }, 'qourum'],
  ])('%j is refused with an OptionsError naming %s', (options, field) => {
    const b = breaker();
    let error: unknown;
    try {
      sharedSignals(b, options as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as OptionsError).message).toContain(field);
    // Nothing was attached.
    expect(probeGateOf(b)).toBeUndefined();
  });

  it('a breaker takes one set of signals; dispose() detaches them', () => {
    const b = breaker();
    const s = sharedSignals(b, { client, subscriber: false, pollInterval: 60_000 });
    expect(() => sharedSignals(b, { client, subscriber: false })).toThrow(UsageError);
    s.dispose();
    const again = sharedSignals(b, { client, subscriber: false, pollInterval: 60_000 });
    again.dispose();
  });
});
