/**
 * docs/observability.md and the metric families of the library's kinds (each policy folder's
 * `metrics.ts`, listed through `POLICY_KINDS`) and the call duration histogram
 * (src/exporters/metricFamilies.ts): the doc's family table is generated from them, and the
 * rest of the doc names no family they do not have. `npm run docs:metrics` runs this file with `--update`, which writes
 * the generated table into the doc.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { metricFamiliesOf } from '../../src/exporters/metricFamilies.js';
import { otelAttributeNames } from '../../src/opentelemetry/index.js';
import { POLICY_KINDS } from '../../src/policies/kinds.js';
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

/** The doc with the text between the markers replaced by the generated table. */
function generatedDoc(): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start === -1 || end < start) throw new Error(`${DOC} lacks the markers of the family table`);
  return doc.slice(0, start + START.length) + familyTable(FAMILIES) + doc.slice(end);
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
  it('lists every metric family of the kinds as their descriptors describe it', async () => {
    await expect(generatedDoc()).toMatchFileSnapshot(
      DOC,
      'the family table differs from the families of the kinds: run npm run docs:metrics',
    );
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
