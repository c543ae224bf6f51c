/**
 * scripts/chart-adaptive.mjs: the SVG it draws is well-formed, holds two panels with their
 * lines, axes, legend and title, and puts every point inside its panel; its command line gives
 * the same drawing. docs/images/bulkhead-codel.svg is its chart of the seeded bulkhead CoDel
 * run, and `npm run docs:charts` (this file with `--update`) redraws it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ChartPoint,
  LINES,
  PANELS,
  renderChart,
  toPoints,
} from '../../scripts/chart-adaptive.mjs';
import { type AdaptiveSecond, convergenceRun, overloadRun } from '../support/adaptive-runs.js';
import { bulkheadOverload } from '../support/bulkheadOverload.js';
import { chartSeries } from '../support/chartSeries.js';
import { findAll, parseSvg, type SvgElement } from '../support/svg.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/chart-adaptive.mjs', import.meta.url));

/** 60 s of a made-up adaptive run: the limit climbs from 20 and settles near 50. */
const FIXED: ChartPoint[] = Array.from({ length: 60 }, (_, t) => {
  const limit = Math.min(52, 20 + 2 * t) - (t % 7 === 6 ? 4 : 0);
  return {
    t,
    limit,
    inflight: Math.min(limit, 48) - 0.25 * (t % 4),
    p50: 20 + (t % 5),
    p99: t < 20 ? 45 + t : 80 - (t % 3) * 5,
  };
});

/** The chart's parts, read back from its SVG. */
function anatomy(svg: string) {
  const root = parseSvg(svg);
  const panels = findAll(root, (e) => e.name === 'g' && e.attributes.class === 'panel');
  const texts = findAll(root, (e) => e.name === 'text').map((e) => e.text);
  const inPanel = (panel: SvgElement) => {
    const plot = findAll(panel, (e) => e.attributes.class === 'plot')[0]!;
    const [x, y, w, h] = ['x', 'y', 'width', 'height'].map((k) => Number(plot.attributes[k]));
    const lines = findAll(panel, (e) => e.name === 'polyline').map((e) => ({
      series: e.attributes['data-series']!,
      points: e.attributes
        .points!.split(' ')
        .map((p) => p.split(',').map(Number) as [number, number]),
    }));
    const axis = (cls: string) =>
      findAll(panel, (e) => e.attributes.class === cls)[0]!.children.filter(
        (e) => e.name === 'text',
      );
    return {
      name: panel.attributes['data-panel'],
      plot: { x: x!, y: y!, right: x! + w!, bottom: y! + h! },
      lines,
      yTicks: axis('y-axis').map((e) => Number(e.text)),
      yTickAt: Object.fromEntries(axis('y-axis').map((e) => [e.text, Number(e.attributes.y)])),
      xTicks: axis('x-axis').map((e) => Number(e.text)),
      legend: findAll(panel, (e) => e.attributes.class === 'legend')[0]!
        .children.filter((e) => e.name === 'text')
        .map((e) => e.text),
    };
  };
  return { root, texts, panels: panels.map(inPanel) };
}

type Panel = ReturnType<typeof anatomy>['panels'][number];

/** The points of a panel's lines that fall outside its plot area. */
function outside({ plot, lines }: Panel): [number, number][] {
  return lines.flatMap((l) =>
    l.points.filter(
      ([x, y]) => !(x >= plot.x && x <= plot.right && y >= plot.y && y <= plot.bottom),
    ),
  );
}

describe('chart-adaptive', () => {
  it('draws the limit and in-flight panel above the latency panel, with axes, legend and title', () => {
    const svg = renderChart(FIXED, { title: 'Gradient2 at 2 x overload' });
    const { root, texts, panels } = anatomy(svg);
    expect(root.name).toBe('svg');
    expect(root.attributes).toMatchObject({
      xmlns: 'http://www.w3.org/2000/svg',
      width: '800',
      height: '520',
      viewBox: '0 0 800 520',
    });
    expect(findAll(root, (e) => e.name === 'title').map((e) => e.text)).toEqual([
      'Gradient2 at 2 x overload',
    ]);
    expect(texts).toContain('Gradient2 at 2 x overload');
    expect(texts).toEqual(expect.arrayContaining(['calls', 'latency (ms)', 'time (s)']));
    expect(panels.map((p) => p.name)).toEqual(['concurrency', 'latency']);
    const [top, bottom] = panels as [Panel, Panel];
    expect(top.plot.bottom).toBeLessThan(bottom.plot.y);
    expect(top.legend).toEqual(['limit', 'in flight']);
    expect(bottom.legend).toEqual(['p50', 'p99']);
    expect(top.lines.map((l) => l.series)).toEqual(['limit', 'inflight']);
    expect(bottom.lines.map((l) => l.series)).toEqual(['p50', 'p99']);
    for (const panel of panels) {
      for (const line of panel.lines) expect(line.points).toHaveLength(FIXED.length);
      expect(outside(panel)).toEqual([]);
      // The y axis starts at 0 and its last tick is at or above the panel's largest figure.
      const keys = LINES.filter((l) => PANELS[l.panel]!.name === panel.name).map((l) => l.key);
      const max = Math.max(...FIXED.flatMap((p) => keys.map((k) => p[k] ?? 0)));
      expect(panel.yTicks[0]).toBe(0);
      expect(panel.yTicks[panel.yTicks.length - 1]).toBeGreaterThanOrEqual(max);
      expect(panel.xTicks[0]).toBe(0);
      expect(panel.xTicks[panel.xTicks.length - 1]).toBeLessThanOrEqual(59);
    }
  });

  it('maps time to the plot width and a figure to its height, 0 at the bottom', () => {
    const { panels } = anatomy(
      renderChart([
        { t: 10, limit: 0, inflight: 40 },
        { t: 20, limit: 40, inflight: 0 },
      ]),
    );
    const { plot, lines, yTicks, yTickAt } = panels[0]!;
    expect(yTicks).toEqual([0, 20, 40, 60]);
    expect(yTickAt['0']).toBe(plot.bottom);
    expect(yTickAt['60']).toBe(plot.y);
    expect(lines.find((l) => l.series === 'limit')!.points).toEqual([
      [plot.x, plot.bottom],
      [plot.right, yTickAt['40']],
    ]);
    // The latency panel has no figure: no line, an axis of [0, 1].
    expect(panels[1]!.lines).toEqual([]);
    expect(panels[1]!.yTicks.at(-1)).toBe(1);
  });

  it('leaves a gap where a figure is missing, null or NaN', () => {
    const points = FIXED.slice(0, 10).map((p, i) => ({
      ...p,
      p50: i === 3 ? null : i === 7 ? Number.NaN : p.p50,
      p99: i === 0 ? undefined : p.p99,
    }));
    const latency = anatomy(renderChart(points)).panels[1]!;
    expect(latency.lines.filter((l) => l.series === 'p50').map((l) => l.points.length)).toEqual([
      3, 3, 2,
    ]);
    expect(latency.lines.filter((l) => l.series === 'p99').map((l) => l.points.length)).toEqual([
      9,
    ]);
    expect(outside(latency)).toEqual([]);
  });

  it('draws a single point inside the plot, and escapes the title', () => {
    const svg = renderChart([{ t: 3, limit: 5, inflight: 5, p50: 1, p99: 2 }], {
      title: 'a <b> & "c"',
    });
    expect(svg).toContain('<title>a &lt;b&gt; &amp; &quot;c&quot;</title>');
    const { texts, panels } = anatomy(svg);
    expect(texts).toContain('a <b> & "c"');
    for (const panel of panels) expect(outside(panel)).toEqual([]);
  });

  it('draws the same bytes for the same series', () => {
    expect(renderChart(FIXED)).toBe(renderChart(structuredClone(FIXED)));
  });

  it.each<[string, unknown, string]>([
    ['not an array', { t: 0 }, 'series must be an array of points: object'],
    ['empty', [], 'series must hold at least one point'],
    ['a point that is not an object', [1], 'series[0] must be an object: number'],
    ['no t', [{ limit: 1 }], 'series[0].t must be a finite number (seconds): undefined'],
    ['t as a string', [{ t: '0' }], 'series[0].t must be a finite number (seconds): "0"'],
    ['t going back', [{ t: 1 }, { t: 1 }], 'series[1].t must be greater than series[0].t (1): 1'],
    [
      'a negative figure',
      [{ t: 0, p99: -1 }],
      'series[0].p99 must be a finite number >= 0, null or left out: -1',
    ],
    [
      'a figure as a string',
      [{ t: 0, limit: '5' }],
      'series[0].limit must be a finite number >= 0, null or left out: "5"',
    ],
  ])('refuses a series that is %s', (_label, value, message) => {
    expect(() => toPoints(value)).toThrow(new TypeError(message));
  });

  describe('command line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chart-adaptive-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const run = (args: string[], input?: string) =>
      spawnSync(process.execPath, [SCRIPT, ...args], { input, encoding: 'utf8' });

    it('reads a file and writes --out, or reads stdin and writes stdout: the same SVG', () => {
      const json = JSON.stringify(FIXED);
      const file = join(dir, 'series.json');
      const out = join(dir, 'chart.svg');
      writeFileSync(file, json);
      const expected = renderChart(FIXED, { title: 'T' });
      expect(run([file, '--out', out, '--title', 'T'])).toMatchObject({ status: 0, stdout: '' });
      expect(readFileSync(out, 'utf8')).toBe(expected);
      expect(run(['--title', 'T'], json)).toMatchObject({ status: 0, stdout: expected });
      expect(run(['-', '--title', 'T'], json)).toMatchObject({ status: 0, stdout: expected });
    });

    it('fails with the reason on stderr and exit code 1', () => {
      expect(run([], '[{"t":0},{"t":-1}]')).toMatchObject({
        status: 1,
        stdout: '',
        stderr: 'chart-adaptive: series[1].t must be greater than series[0].t (0): -1\n',
      });
      expect(run(['--colour', 'red'], '[]')).toMatchObject({
        status: 1,
        stderr: 'chart-adaptive: unknown option --colour (known: --out FILE, --title TEXT)\n',
      });
    });
  });
});

describe('docs/images/bulkhead-codel.svg', () => {
  it('is the chart of the seeded bulkhead CoDel run at 1.5 x overload', async () => {
    const { sim, pool } = await bulkheadOverload('codel');
    const points = chartSeries(sim.series, () => pool.maxConcurrent);
    const svg = renderChart(toPoints(JSON.parse(JSON.stringify(points))), {
      title: 'Bulkhead of 10, CoDel queue, 1.5 x overload (simulated, seed 7)',
    });
    const { panels } = anatomy(svg);
    for (const panel of panels) {
      expect(panel.lines.map((l) => l.points.length)).toEqual([60, 60]);
      expect(outside(panel)).toEqual([]);
    }
    await expect(svg).toMatchFileSnapshot(
      '../../docs/images/bulkhead-codel.svg',
      'the chart differs from the run: run npm run docs:charts',
    );
  });
});

/** An adaptive-limit run's seconds as the chart's points. */
function adaptivePoints(series: readonly AdaptiveSecond[]): ChartPoint[] {
  const figure = (v: number) => (Number.isFinite(v) ? v : null);
  return series.map((s) => ({
    t: s.second,
    limit: s.limit,
    inflight: figure(s.inFlight),
    p50: figure(s.p50),
    p99: figure(s.p99),
  }));
}

describe.each([
  {
    file: 'adaptive-convergence.svg',
    title: 'Adaptive limit: C = 50, 200 closed-loop clients, initial limit 20 (simulated, seed 1)',
    run: () => convergenceRun(),
    seconds: 330,
  },
  {
    file: 'adaptive-overload.svg',
    title: 'Adaptive limit: C = 50, 2 x overload, open loop, 600 s (simulated, seed 2)',
    run: () => overloadRun(),
    seconds: 600,
  },
])('docs/images/$file', ({ file, title, run, seconds }) => {
  it('is the chart of its seeded adaptive-limit run, every point inside its panel', async () => {
    const { series } = await run();
    const svg = renderChart(toPoints(JSON.parse(JSON.stringify(adaptivePoints(series)))), {
      title,
    });
    const { panels } = anatomy(svg);
    expect(panels[0]!.lines[0]!.points.length).toBe(seconds);
    for (const panel of panels) expect(outside(panel)).toEqual([]);
    await expect(svg).toMatchFileSnapshot(
      `../../docs/images/${file}`,
      'the chart differs from the run: run npm run docs:charts',
    );
  }, 120_000);
});
