/** The text outputs of the handler keep untrusted names and keys inert. */
import { describe, expect, it } from 'vitest';
import { dashboardPage, escapeHtml } from '../../src/observability/dashboard/page.js';
import { DASHBOARD_SCRIPT } from '../../src/observability/dashboard/script.js';
import { safeJson } from '../../src/observability/respond.js';

const HOSTILE = '</script><!--<img src=x onerror=alert(1)>&"\'\n\r\u2028\u2029';

describe('safeJson', () => {
  it('writes no <, >, &, line break or line separator, and parses back to the same value', () => {
    const value = { key: HOSTILE, nested: [HOSTILE], n: 1.5 };
    const json = safeJson(value);
    expect(json).not.toMatch(/[<>&\n\r\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual(value);
  });

  it('cannot close a script element it is embedded in', () => {
    expect(safeJson('</script>')).toBe('"\\u003c/script\\u003e"');
  });
});

describe('escapeHtml', () => {
  it('escapes the five characters that matter in text and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

describe('the dashboard document', () => {
  it('holds no markup made from data: its title is escaped and nothing else varies', () => {
    const a = dashboardPage(HOSTILE, 'n0nce');
    expect(a).not.toContain('<img');
    expect(a.match(/<\/script>/g)).toHaveLength(1);
    expect(a.replaceAll(escapeHtml(HOSTILE), 'T')).toBe(dashboardPage('T', 'n0nce'));
  });

  it('has a script that never writes markup from data', () => {
    expect(DASHBOARD_SCRIPT).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/,
    );
    expect(DASHBOARD_SCRIPT).toContain('textContent');
  });

  it('has a script that cannot end its own script element early', () => {
    expect(DASHBOARD_SCRIPT).not.toMatch(/<\/script|<!--/i);
  });
});
