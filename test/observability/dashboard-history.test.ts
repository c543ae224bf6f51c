/**
 * The history the dashboard page keeps per instance (its script's HISTORY_SCRIPT, run here as
 * the page runs it): bounded by time and by count however fast snapshots come or a breaker
 * flaps, and a state held between two snapshots still in it.
 */
import { describe, expect, it } from 'vitest';
import { HISTORY_SCRIPT } from '../../src/observability/dashboard/history.js';

interface Point {
  readonly at: number;
  readonly calls?: number;
  readonly failed?: number;
  readonly levels?: Record<string, number>;
}
interface History {
  readonly points: Point[];
  readonly segments: { state: string; from: number }[];
  readonly marks: { at: number; from: string; to: string }[];
}
type Counters = Record<string, number | undefined>;
interface Script {
  readonly WINDOW_MS: number;
  readonly MAX_POINTS: number;
  readonly MAX_SEGMENTS: number;
  newHistory(): History;
  record(
    h: History,
    c: Counters,
    before: Counters | undefined,
    s: number,
    i: object,
    at: number,
  ): void;
  changeState(h: History, state: string, at: number, from: string | undefined): void;
}

/** The script's functions, with the two helpers of the page it uses (`num`, `rate`) as the page has them. */
function load(): Script {
  const body = `
    const num = (x) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
    function rate(now, before, seconds) {
      if (now === undefined || before === undefined || !(seconds > 0)) return undefined;
      return Math.max(0, now >= before ? now - before : now) / seconds;
    }
    ${HISTORY_SCRIPT}
    return { WINDOW_MS, MAX_POINTS, MAX_SEGMENTS, newHistory, record, changeState };`;
  return new Function(body)() as Script;
}

const T0 = 1_800_000_000_000;

/** Snapshots of a breaker every `step` ms for `ms`, its counters growing, in `state`. */
function feed(
  s: Script,
  h: History,
  step: number,
  ms: number,
  state = 'closed',
  from = T0,
): number {
  let before: Counters | undefined;
  let at = from;
  for (; at < from + ms; at += step) {
    const c = { calls: (at - from) / 10, rejected: 0, failed: 0, trend: undefined };
    const instance = { state, row: { levels: { 'in flight': 1, limit: 4 } }, stats: {} };
    s.record(h, c, before, step / 1000, instance, at);
    before = c;
  }
  return at - step;
}

describe('the history the dashboard page keeps', () => {
  it('keeps the points of the last 5 minutes, with rates from the counters and the levels', () => {
    const s = load();
    const h = s.newHistory();
    const last = feed(s, h, 1000, 10 * 60_000);
    expect(s.WINDOW_MS).toBe(300_000);
    expect(h.points.length).toBe(301);
    expect(h.points[0]!.at).toBe(last - 300_000);
    expect(h.points.at(-1)).toMatchObject({
      at: last,
      calls: 100,
      failed: 0,
      levels: { limit: 4 },
    });
  });

  it('keeps at most MAX_POINTS however fast the snapshots come', () => {
    const s = load();
    const h = s.newHistory();
    const last = feed(s, h, 10, 120_000);
    expect(h.points.length).toBe(s.MAX_POINTS);
    expect(h.points.at(-1)!.at).toBe(last);
  });

  it('bounds the segments and marks of a breaker that flaps, keeping the newest', () => {
    const s = load();
    const h = s.newHistory();
    for (let k = 0; k < 5000; k++)
      s.changeState(h, k % 2 === 0 ? 'closed' : 'open', T0 + k * 10, undefined);
    expect(h.segments.length).toBe(s.MAX_SEGMENTS);
    expect(h.marks.length).toBe(s.MAX_SEGMENTS);
    expect(h.marks.at(-1)).toEqual({ at: T0 + 4999 * 10, from: 'closed', to: 'open' });
  });

  it('keeps the state running at the start of the window, however long ago it began', () => {
    const s = load();
    const h = s.newHistory();
    s.changeState(h, 'open', T0, undefined);
    s.changeState(h, 'closed', T0 + 1000, 'open');
    feed(s, h, 1000, 20 * 60_000, 'closed', T0 + 2000);
    expect(h.segments).toEqual([{ state: 'closed', from: T0 + 1000 }]);
    expect(h.marks).toEqual([]);
  });

  it('shows a state held between two snapshots: transition events mark their own times', () => {
    const s = load();
    const h = s.newHistory();
    feed(s, h, 1000, 2000, 'open');
    s.changeState(h, 'half-open', T0 + 2100, 'open');
    s.changeState(h, 'closed', T0 + 2150, 'half-open');
    // The next snapshot lists the state the events ended in: nothing new.
    feed(s, h, 1000, 1000, 'closed', T0 + 3000);
    expect(h.segments).toEqual([
      { state: 'open', from: T0 },
      { state: 'half-open', from: T0 + 2100 },
      { state: 'closed', from: T0 + 2150 },
    ]);
    expect(h.marks.map((m) => `${m.from}>${m.to}`)).toEqual(['open>half-open', 'half-open>closed']);
  });

  it('notes a change of state a snapshot shows when no event told of it (a kind without transition events)', () => {
    const s = load();
    const h = s.newHistory();
    feed(s, h, 1000, 2000, 'accepting');
    feed(s, h, 1000, 1000, 'stopped', T0 + 2000);
    expect(h.marks).toEqual([{ at: T0 + 2000, from: 'accepting', to: 'stopped' }]);
  });
});
