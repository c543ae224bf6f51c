/**
 * docs/benchmarks.md, regenerated from one run by `npm run bench:doc`: benchmarks/page.md, the
 * page's fixed text, with each `{{name}}` in it replaced by the part of the page computed from
 * the run. What the scenarios say of their rows and of missed budgets comes from their files
 * (lib/readings.mjs), the conditions of the run from lib/conditions.mjs, the tables from
 * lib/report.mjs and lib/pollution.mjs.
 */
import { readFileSync } from 'node:fs';
import { conditions, libraryLine } from './conditions.mjs';
import { pollutionSection } from './pollution.mjs';
import { missNotes, readings } from './readings.mjs';
import { budgetSections, markdownResults } from './report.mjs';

// The header test of the doc reads the library line here.
export { libraryLine };

const page = readFileSync(new URL('../page.md', import.meta.url), 'utf8');

/** The page for a report, with the scenarios (as loadScenarios returns them) that read it. */
export function renderDoc(report, scenarios) {
  const parts = {
    ...conditions(report),
    ...budgetSections(report.budgets),
    peerMissNotes: missNotes(report, scenarios, 'missNote'),
    ownMissNotes: missNotes(report, scenarios, 'ownMissNote'),
    results: markdownResults(report),
    pollution: pollutionSection(report),
    readings: readings(report, scenarios),
  };
  return page.replace(/\{\{(\w+)\}\}/g, (_, name) => {
    if (!Object.hasOwn(parts, name)) throw new Error(`benchmarks/page.md: no part {{${name}}}`);
    return parts[name];
  });
}
