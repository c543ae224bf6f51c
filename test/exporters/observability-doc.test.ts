/**
 * docs/observability.md and the metric families of the library's kinds (each policy folder's
 * `metrics.ts`, listed through `POLICY_KINDS`) and the call duration histogram
 * (src/exporters/metricFamilies.ts): the doc's family table is generated from them, and the
 * rest of the doc names no family they do not have. Its span event and channel tables are
 * generated from the kinds' descriptors (`spanEvents`, `channels`) the same way. `npm run docs:metrics` runs this file with `--update`, which writes
 * the generated table into the doc.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { metricFamiliesOf } from '../../src/exporters/metricFamilies.js';
import { otelAttributeNames } from '../../src/opentelemetry/index.js';
import { POLICY_KINDS } from '../../src/policies/kinds.js';
import type { AnyPolicyKind } from '../../src/protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../src/telemetry/metricFamily.js';

const DOC = '../../docs/observability.md';
const doc = readFileSync(fileURLToPath(new URL(DOC, import.meta.url)), 'utf8');
const START =
  '<!-- Generated from the families of the policy kinds (src/policies/*/metrics.ts) and src/exporters/metricFamilies.ts by `npm run docs:metrics`: edit the entries there. -->\n';
const END = '<!-- End of the generated table. -->\n';

/** Every family the library's kinds report, in the order `collectMetrics` reports them. */
const FAMILIES = metricFamiliesOf(POLICY_KINDS);

const INSTRUMENT = { counter: 'counter', upDownCounter: 'up-down counter', gauge: 'gauge' };

function row(f: MetricFamilyDescriptor): string {
  const instrument =
    f.type === 'histogram' && f.otel.kind === 'gauge'
      ? 'gauge (percentiles)'
      : INSTRUMENT[f.otel.kind];
  const labels = f.labels.map((l) => `\`${l}\``).join(', ');
  return `| \`${f.name}\` | ${f.type} | ${labels} | \`${f.otel.name}\` | ${instrument} | \`${f.unit}\` |`;
}

/** The family table as the doc shows it. */
function familyTable(families: readonly MetricFamilyDescriptor[]): string {
  return [
    '',
    '| Prometheus family | type | labels | OpenTelemetry instrument | kind | unit |',
    '|---|---|---|---|---|---|',
    ...families.map(row),
    '',
    '',
  ].join('\n');
}

const EVENTS_START =
  "<!-- Generated from the span events of the policy kinds (each descriptor's `spanEvents`) by `npm run docs:metrics`: edit them there. -->\n";
const CHANNELS_START =
  "<!-- Generated from the channels of the policy kinds (each descriptor's `channels`) by `npm run docs:metrics`: edit them there. -->\n";

/** A Markdown table of `head` and `rows`. */
const table = (head: string, rows: readonly string[]): string =>
  [head, head.replace(/[^|]+/g, '---'), ...rows, ''].join('\n');

/** The span event table: each event once, its `{placeholders}` filled from every kind making it. */
function eventTable(kinds: readonly AnyPolicyKind[]): string {
  const events = new Map<string, { doc: string; values: Map<string, Set<string>> }>();
  for (const e of kinds.flatMap((k) => k.spanEvents ?? [])) {
    const seen = events.get(e.name) ?? { doc: e.doc ?? '', values: new Map() };
    events.set(e.name, seen);
    for (const [name, values] of Object.entries(e.values ?? {})) {
      const set = seen.values.get(name) ?? new Set();
      for (const v of values) set.add(v);
      seen.values.set(name, set);
    }
  }
  const rows = [...events].map(([name, { doc, values }]) => {
    const filled = doc.replace(/\{(\w+)\}/g, (_, key: string) =>
      [...(values.get(key) ?? [])].map((v) => `\`${v}\``).join(', '),
    );
    return `| \`${name}\` | ${filled} |`;
  });
  return table('| event | attributes |', rows);
}

/** The channel table: each channel once, with its message. */
function channelTable(kinds: readonly AnyPolicyKind[]): string {
  const channels = new Map<string, string>();
  for (const c of kinds.flatMap((k) => k.channels ?? [])) channels.set(c.channel, c.message);
  return table(
    '| channel | message |',
    [...channels].map(([channel, message]) => `| \`${channel}\` | ${message} |`),
  );
}

/** `text` with what follows `start`, up to the next end marker, replaced by `generated`. */
function between(text: string, start: string, generated: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(END, from);
  if (from === -1 || to < from) throw new Error(`${DOC} lacks the markers ${start.trim()}`);
  return text.slice(0, from + start.length) + generated + text.slice(to);
}

/** The doc with the text between each pair of markers replaced by its generated table. */
function generatedDoc(): string {
  let text = between(doc, START, familyTable(FAMILIES));
  text = between(text, EVENTS_START, eventTable(POLICY_KINDS));
  return between(text, CHANNELS_START, channelTable(POLICY_KINDS));
}

/** The rows of the Markdown table that follows `heading`, as cells. */
function tableAfter(heading: string): string[][] {
  const lines = doc.slice(doc.indexOf(heading)).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

describe('docs/observability.md', () => {
  it('lists every metric family, span event and channel of the kinds as their descriptors describe them', async () => {
    await expect(generatedDoc()).toMatchFileSnapshot(
      DOC,
      'a generated table differs from the descriptors of the kinds: run npm run docs:metrics',
    );
  });

  it('has a doc for every span event and channel of the kinds', () => {
    for (const kind of POLICY_KINDS) {
      for (const e of kind.spanEvents ?? []) expect(e.doc, `${kind.name}: ${e.name}`).toBeTruthy();
      for (const c of kind.channels ?? [])
        expect(c.message, `${kind.name}: ${c.channel}`).toBeTruthy();
    }
  });

  it('names no Prometheus family but those of the kinds', () => {
    const known = new Set(
      FAMILIES.flatMap((f) =>
        f.type === 'histogram'
          ? [f.name, `${f.name}_bucket`, `${f.name}_sum`, `${f.name}_count`]
          : [f.name],
      ),
    );
    const named = new Set(doc.match(/\bbreakwater_[a-z_]+/g));
    expect(named.size).toBeGreaterThan(0);
    expect([...named].filter((n) => !known.has(n))).toEqual([]);
  });

  it('gives the OpenTelemetry attribute of every label of the families', () => {
    const rows = tableAfter('## Labels and attributes');
    for (const label of new Set(FAMILIES.flatMap((f) => f.labels))) {
      const r = rows.find(([labels]) => labels!.split(', ').includes(`\`${label}\``));
      expect(r, `label ${label}`).toBeDefined();
      const attribute = otelAttributeNames[label];
      expect(r![1], `label ${label}`).toBe(
        attribute === undefined ? 'the same names' : `\`${attribute}\``,
      );
    }
  });
});
