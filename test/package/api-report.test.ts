/**
 * The public surface of each entry point, read from the built declarations (dist/; `npm test`
 * builds before Vitest), is the one committed under api/: a change to it fails here until it is
 * accepted with `npm run api:report`, so it shows as a diff in review.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type ApiReport,
  type ApiRow,
  apiReports,
  formatReport,
  parseReport,
} from '../../scripts/api-report.mjs';
import { entries } from '../../tsdown.config';

const root = fileURLToPath(new URL('../../', import.meta.url));
const reports = apiReports();

/** What changed from the committed rows to the built ones, one line per export. */
function changes(committed: readonly ApiRow[], built: readonly ApiRow[]): string[] {
  const before = new Map(committed.map((r) => [r.name, r]));
  const after = new Map(built.map((r) => [r.name, r]));
  const lines: string[] = [];
  for (const [name, r] of after) {
    const old = before.get(name);
    if (!old) lines.push(`  + added    ${name} (${r.kind})`);
    else if (old.kind !== r.kind || old.digest !== r.digest) {
      lines.push(`  ~ changed  ${name} (${old.kind} ${old.digest} -> ${r.kind} ${r.digest})`);
    }
  }
  for (const [name, r] of before) {
    if (!after.has(name)) lines.push(`  - removed  ${name} (${r.kind})`);
  }
  return lines;
}

function difference(report: ApiReport): string {
  const path = join(root, report.file);
  const text = formatReport(report);
  const committed = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (committed === text) return '';
  const lines =
    committed === undefined
      ? [`  ${report.file} does not exist`]
      : changes(parseReport(committed), report.rows);
  return [
    `The public surface of entry '${report.subpath}' differs from ${report.file}:`,
    ...(lines.length > 0 ? lines : ['  (the same exports; the file is not as generated)']),
    `If the change is intended, accept it: npm run api:report, and commit ${report.file}.`,
  ].join('\n');
}

it('has a report for every entry point in tsdown.config.ts', () => {
  expect(reports.map((r) => r.subpath)).toEqual(Object.keys(entries));
});

describe.each(reports.map((r) => [r.subpath, r] as const))('entry %s', (_, report) => {
  it('exports what its committed API report lists, declarations unchanged', () => {
    expect(difference(report)).toBe('');
  });
});

it('the CommonJS declarations (.d.cts) publish the same surface as the ESM ones', () => {
  expect(apiReports('.d.cts')).toEqual(reports);
});

it('names each added, removed and changed export, and the command that accepts them', () => {
  const committed: ApiRow[] = [
    { name: 'kept', kind: 'function', digest: 'aaaaaaaaaaaa' },
    { name: 'Reshaped', kind: 'interface', digest: 'bbbbbbbbbbbb' },
    { name: 'gone', kind: 'const', digest: 'cccccccccccc' },
  ];
  const built: ApiRow[] = [
    { name: 'kept', kind: 'function', digest: 'aaaaaaaaaaaa' },
    { name: 'Reshaped', kind: 'interface', digest: 'dddddddddddd' },
    { name: 'fresh', kind: 'class', digest: 'eeeeeeeeeeee' },
  ];
  expect(changes(committed, built)).toEqual([
    '  ~ changed  Reshaped (interface bbbbbbbbbbbb -> interface dddddddddddd)',
    '  + added    fresh (class)',
    '  - removed  gone (const)',
  ]);
  const report = { subpath: './x', file: 'api/none.api.md', rows: built };
  expect(difference(report)).toContain('npm run api:report');
});
