/**
 * The demo's healthy phase on a machine made busy on purpose (a child process spinning on a
 * core, this process's event loop blocked 50 ms in every 500 ms), in a child process against
 * the BUILT package. The demo's earlier settings (a 300 ms timeout, slow calls from 250 ms
 * judged over the last 20 calls once 10 were made, no warm-up) opened the breaker here.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runNodeScript } from '../support/child.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

beforeAll(() => {
  if (!existsSync(`${root}dist/index.js`)) {
    throw new Error('The package is not built: run npm run build first (npm test does).');
  }
});

describe('the demo on a busy machine', () => {
  it('keeps the breaker closed through the healthy phase: no transition at all', async () => {
    const run = await runNodeScript(
      'test/demo/fixtures/busy-healthy.mjs',
      [3, 50, 500],
      root,
      30_000,
    );
    expect(run.stderr).toBe('');
    expect(run.code, run.stdout).toBe(0);
    const result = JSON.parse(run.stdout) as {
      state: string;
      transitions: unknown[];
      guarded: { calls: number; reached: number };
    };
    expect(result.transitions, run.stdout).toEqual([]);
    expect(result.state).toBe('closed');
    expect(result.guarded.calls).toBe(150);
    expect(result.guarded.reached).toBeGreaterThan(0);
  }, 40_000);
});
