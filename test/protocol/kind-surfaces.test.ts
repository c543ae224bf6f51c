/**
 * What every surface needs of a kind, checked on each kind of the list (`POLICY_KINDS`) and
 * on the kind defined outside the library in test/support: library kinds pass the same checks
 * as outside ones. The per-kind fixtures of the exporters' tests (the Prometheus scenario and
 * its expected series, which the OpenTelemetry tests share) are checked against the list, so
 * a kind left out of them fails here.
 */
import { describe, expect, it } from 'vitest';
import { POLICY_KINDS } from '../../src/policies/kinds.js';
import type { AnyPolicyKind } from '../../src/protocol/kind.js';
import { SCENARIO_SERIES } from '../prometheus/expected.js';
import { useScenario } from '../prometheus/scenario.js';
import { concurrencyCapKind } from '../support/concurrencyCapKind.js';

const KINDS: [string, AnyPolicyKind][] = [
  ...POLICY_KINDS.map((k): [string, AnyPolicyKind] => [k.name, k]),
  ['concurrencyCap (outside)', concurrencyCapKind],
];

describe.each(KINDS)('the %s kind', (_, kind) => {
  it('names itself, its config section and its label', () => {
    expect(kind.name).toMatch(/^[a-z][A-Za-z]*$/);
    expect(kind.section).toMatch(/^[a-z][A-Za-z]*$/);
    expect(kind.section).not.toBe(kind.name);
    expect(kind.label.length).toBeGreaterThan(0);
    expect(kind.config.schema.size).toBeGreaterThan(0);
  });

  it('declares metric families every exporter can name: Prometheus, OpenTelemetry and the docs', () => {
    const families = kind.metrics?.families ?? [];
    expect(families.length).toBeGreaterThan(0);
    for (const f of families) {
      expect(f.name, f.name).toMatch(/^[a-z]+(_[a-z]+)+$/);
      expect(f.name.endsWith('_total'), f.name).toBe(f.type === 'counter');
      expect(f.help.length, f.name).toBeGreaterThan(0);
      expect(f.unit, f.name).toMatch(/^(\{[a-z]+\}|1|s)$/);
      expect(f.labels.slice(0, 2), f.name).toEqual(['name', 'key']);
      expect(f.otel.name, f.name).toMatch(/^[a-z]+(\.[a-z_]+)+$/);
      expect(f.otel.name.endsWith('_total'), f.name).toBe(false);
      if (f.type === 'counter') expect(f.otel.kind, f.name).toBe('counter');
      else expect(f.otel.kind, f.name).not.toBe('counter');
    }
  });

  it('documents each of its channels and span events, and makes events from channels it names', () => {
    const channels = new Set((kind.channels ?? []).map((c) => c.channel));
    for (const c of kind.channels ?? []) {
      expect(c.key, c.channel).toMatch(/^[a-z][A-Za-z]*$/);
      expect(c.message.length, c.channel).toBeGreaterThan(0);
    }
    for (const e of kind.spanEvents ?? []) {
      expect(channels.has(e.channel), `${e.name} from ${e.channel}`).toBe(true);
      expect(e.key, e.name).toBeDefined();
      expect(e.doc, e.name).toBeDefined();
    }
  });
});

describe('the per-kind fixtures of the exporters’ tests', () => {
  const scenario = useScenario();

  it('the Prometheus scenario holds an instance of every kind of the list', async () => {
    const { registry } = await scenario();
    const kinds = new Set<string>(registry.snapshot().instances.map((i) => i.kind));
    expect(POLICY_KINDS.map((k) => k.name).filter((name) => !kinds.has(name))).toEqual([]);
  });

  it('its expected series cover every metric family of every kind of the list', () => {
    const covered = new Set(SCENARIO_SERIES.map(([family]) => family));
    const missing = POLICY_KINDS.flatMap((k) => k.metrics?.families ?? [])
      .map((f) => f.name)
      .filter((name) => !covered.has(name));
    expect(missing).toEqual([]);
  });
});
