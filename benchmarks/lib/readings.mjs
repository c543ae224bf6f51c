/**
 * What the scenario files say in the doc, in scenario order: their paragraphs of “What the
 * numbers say” (`reading`) and their notes on missed budgets (`missNote`, `ownMissNote`).
 */
import { pollutionReading } from './pollution.mjs';
import { finder } from './prose.mjs';

const bullets = (items) => items.map((s) => `- ${s}`).join('\n');

/** Each scenario's paragraph, then the polluted profiles', as a list. */
export function readings(report, scenarios) {
  const get = finder(report);
  const paragraphs = scenarios.map((s) => s.module.reading?.({ report, get }));
  paragraphs.push(pollutionReading(report));
  return bullets(paragraphs.filter((s) => s !== undefined));
}

const INTRO = {
  missNote: 'Where a budget is missed, what costs the difference (figures from this run):',
  ownMissNote: 'Where a budget is missed (figures from this run):',
};

/**
 * The scenarios' notes (`hook`: 'missNote' on the budgets against the peers, 'ownMissNote' on
 * breakwater's own) on the budgets this run missed, under their heading line, as a paragraph set
 * off by blank lines; nothing when there is none.
 */
export function missNotes(report, scenarios, hook) {
  const get = finder(report);
  const missed = new Set(report.budgets.filter((b) => b.pass === false).map((b) => b.id));
  const notes = scenarios
    .map((s) => s.module[hook]?.({ report, get, missed }))
    .filter((n) => n !== undefined);
  return notes.length === 0 ? '' : `\n${INTRO[hook]}\n\n${bullets(notes)}\n`;
}
