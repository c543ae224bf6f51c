/**
 * The README and docs/observability.md name the diagnostics channels from the one list the
 * library exports (`diagnosticsChannels`), so neither can leave one out.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { diagnosticsChannels } from '../../src/index.js';

const read = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');
const CHANNELS = Object.values(diagnosticsChannels).sort();
/** Channel names in `text`. */
const named = (text: string) =>
  [...new Set(text.match(/breakwater:[a-z]+(?:[:-][a-z]+)*/g))].sort();

describe('the docs of the diagnostics channels', () => {
  it('the README lists every channel', () => {
    const readme = read('README.md');
    const bullet = readme.slice(readme.indexOf('- **diagnostics_channel**'));
    expect(named(bullet.slice(0, bullet.indexOf('\n- **')))).toEqual(CHANNELS);
  });

  it('docs/observability.md has a row for every channel', () => {
    const doc = read('docs/observability.md');
    const section = doc.slice(doc.indexOf('## Diagnostics channels'));
    const rows = section.split('\n').filter((l) => l.startsWith('| `breakwater:'));
    expect(named(rows.map((r) => r.split('|')[1]).join(' '))).toEqual(CHANNELS);
  });

  it('docs/observability.md gives every hedge reason, pushback included', () => {
    const doc = read('docs/observability.md');
    const hedgeRow = doc.split('\n').find((l) => l.startsWith('| `breakwater:hedge`'))!;
    for (const reason of ['delay', 'failure', 'pushback'])
      expect(hedgeRow).toContain(`\`${reason}\``);
  });
});
