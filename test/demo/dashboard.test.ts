/**
 * `npm run demo -- --dashboard` end to end, in a child process against the BUILT package: the
 * printed address serves the dashboard, health and metrics while the run plays out and after
 * it, until the process is told to stop.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runNodeScript } from '../support/child.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

beforeAll(() => {
  if (!existsSync(`${root}dist/observability/index.js`)) {
    throw new Error(
      'breakwater/observability is not built: run npm run build first (npm test does).',
    );
  }
});

let child: ChildProcessWithoutNullStreams | undefined;
afterEach(() => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
  }
  child = undefined;
});

/** Starts the demo and collects what it writes. */
function startDemo(args: string[]) {
  const proc = spawn(process.execPath, ['demo/run.mjs', ...args], { cwd: root });
  child = proc;
  const out = { stdout: '', stderr: '' };
  proc.stdout.on('data', (chunk) => {
    out.stdout += chunk;
  });
  proc.stderr.on('data', (chunk) => {
    out.stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal })),
  );
  /** Resolves with the first match of `pattern` in the output so far or to come. */
  const waitFor = async (pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = out.stdout.match(pattern);
      if (match !== null) return match;
      if (proc.exitCode !== null || Date.now() > deadline) {
        throw new Error(`No ${pattern} in the demo's output:\n${out.stdout}\n${out.stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { proc, out, exited, waitFor };
}

describe('npm run demo -- --dashboard', () => {
  it('serves the dashboard at the printed address during the run and after it, until stopped', async () => {
    const demo = startDemo(['--seconds', '6', '--dashboard']);
    const [, url] = await demo.waitFor(
      /dashboard:\s+(http:\/\/127\.0\.0\.1:\d+\/dashboard)\s/,
      10_000,
    );
    const base = url!.slice(0, -'/dashboard'.length);

    const page = await fetch(url!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>breakwater demo</title>');
    const health = await fetch(`${base}/health`);
    expect([200, 503]).toContain(health.status);
    const body = (await health.json()) as { instances: { kind: string; name: string }[] };
    expect(body.instances.map((i) => i.kind).sort()).toEqual([
      'bulkhead',
      'circuitBreaker',
      'retry',
      'timeout',
    ]);
    expect(new Set(body.instances.map((i) => i.name))).toEqual(new Set(['dependency']));

    await demo.waitFor(/press Ctrl-C to stop/, 15_000);
    expect(demo.out.stdout).toMatch(/^summary$/m);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(
      /breakwater_circuit_breaker_transitions_total\{[^}]*name="dependency"[^}]*to="open"[^}]*\} [1-9]/,
    );

    demo.proc.kill('SIGINT');
    const exit = await demo.exited;
    expect(exit, demo.out.stderr).toEqual({ code: 0, signal: null });
    expect(demo.out.stderr).toBe('');
  }, 40_000);

  it('refuses --port without --dashboard, and a port that is not one', async () => {
    const alone = await runNodeScript('demo/run.mjs', ['--port', '8080'], root, 10_000);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/Give --port with --dashboard/);
    const bad = await runNodeScript(
      'demo/run.mjs',
      ['--dashboard', '--port', '70000'],
      root,
      10_000,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Expected --port to be an integer in \[0, 65535\], got "70000"/);
  });

  it('lists the dashboard flags in its usage', async () => {
    const help = await runNodeScript('demo/run.mjs', ['--help'], root, 10_000);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--dashboard/);
    expect(help.stdout).toMatch(/--port N/);
  });
});
