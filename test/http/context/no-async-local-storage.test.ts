/**
 * Where the runtime has no AsyncLocalStorage, a request context holds while its function runs
 * synchronously and no longer: checked in a process of its own, on the built package, with
 * `process.getBuiltinModule` taken away before the first context is opened.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { root } from '../../support/build.js';
import { runNodeScript } from '../../support/child.js';

const script = `
import { pipeline, retry } from '${root}dist/index.js';
import { runWithRequestContext } from '${root}dist/http/index.js';
delete process.getBuiltinModule;
const p = pipeline(retry({ maxAttempts: 1 }));
const seen = await runWithRequestContext({ timeout: 5000, criticality: 'sheddable' }, async () => {
  const sync = await p.execute(({ timeLeft }) => timeLeft);
  const afterAwait = await p.execute(({ timeLeft }) => timeLeft);
  return { sync, afterAwait };
});
const outside = await p.execute(({ timeLeft }) => timeLeft);
console.log(JSON.stringify({ ...seen, outside }));
`;

describe('request context without AsyncLocalStorage', () => {
  beforeAll(() => {
    if (!existsSync(`${root}dist/http/index.js`)) {
      throw new Error('breakwater/http is not built: run npm run build first (npm test does).');
    }
  });

  it('reaches the calls made synchronously within it and none after its first await', async () => {
    const dir = `${root}test-artifacts/no-als`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/run.mjs`, script);
    const exit = await runNodeScript(`${dir}/run.mjs`, [], root, 60_000);
    expect(exit.stderr).toBe('');
    const seen = JSON.parse(exit.stdout) as Record<string, number | null>;
    expect(seen.sync).toBeLessThanOrEqual(5_000);
    // JSON writes Infinity as null.
    expect(seen.afterAwait).toBeNull();
    expect(seen.outside).toBeNull();
  });
});
