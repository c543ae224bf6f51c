/**
 * scripts/test.mjs, which `npm test` runs: the stages run in order, the first failure stops the
 * run, and its last line names the stage that failed, with its exit code. Each case runs the
 * runner on stages that are small node commands, in a child process.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stages } from '../../scripts/test.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs the runner on stages `[name, exit code]` and returns how it ended and what it wrote. */
function runFakeStages(list: readonly [string, number][]) {
  const fake = list.map(([name, code]) => [
    name,
    [process.execPath, '-e', `console.log('running ${name}'); process.exit(${code})`],
  ]);
  const source = `import { runStages } from './scripts/test.mjs';
process.exitCode = runStages(${JSON.stringify(fake)}, process.cwd());`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', source], {
    cwd: root,
    encoding: 'utf8',
  });
  return { code: run.status, output: `${run.stdout}${run.stderr}`, stderr: run.stderr };
}

describe('npm test runs its stages through scripts/test.mjs', () => {
  it('package.json runs the runner, whose stages are lint, typecheck, build, vitest, check:package', () => {
    const { scripts } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts.test).toBe('node scripts/test.mjs');
    expect(stages.map(([name]) => name)).toEqual([
      'lint',
      'typecheck',
      'build',
      'vitest',
      'check:package',
    ]);
  });

  it('names the stage that failed and its exit code last, runs nothing after it, and exits with its code', () => {
    const run = runFakeStages([
      ['lint', 0],
      ['vitest', 3],
      ['check:package', 0],
    ]);
    expect(run.code).toBe(3);
    expect(run.output).toMatch(/running lint[\s\S]*running vitest/);
    expect(run.output).not.toMatch(/running check:package/);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(
      /^npm test: stage vitest failed \(exit 3\) after \d+ s$/,
    );
  });

  it('exits 0 after every stage passed, and says so', () => {
    const run = runFakeStages([
      ['lint', 0],
      ['build', 0],
    ]);
    expect(run.code).toBe(0);
    expect(run.output).toMatch(/npm test: all 2 stages passed in \d+ s/);
  });
});
