/**
 * Heap cost of keyed instances, measured in a child process with --expose-gc by
 * test/registry/keyed-memory.mjs on a build of src/ made here (test-artifacts/ is not
 * committed). Small key counts keep it quick; run the script by hand for the full numbers:
 *
 *   node --expose-gc test/registry/keyed-memory.mjs <built index.js> idle 1000000
 *   node --expose-gc test/registry/keyed-memory.mjs <built index.js> churn 10000000 100000
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildLibrary, root } from '../support/build.js';

const script = fileURLToPath(new URL('./keyed-memory.mjs', import.meta.url));
let library = '';

function measure(args: readonly string[]): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', script, library, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`exit ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

beforeAll(async () => {
  library = await buildLibrary('registry-memory');
}, 60_000);

describe('keyed breakers memory', () => {
  it('an idle keyed breaker (one call made, count window of 100) costs at most 200 bytes', async () => {
    // 250,000 keys fill the slot arrays to 95 % (they grow by doubling), as 1,000,000 do.
    const result = await measure(['idle', '250000']);
    expect(result.held).toBe(250_000);
    expect(result.bytesPerKey).toBeGreaterThan(0);
    expect(result.bytesPerKey).toBeLessThanOrEqual(200);
  }, 60_000);

  it('a pipeline of one key’s breaker, as a keyed pipeline keeps per live key, costs at most 1,000 bytes', async () => {
    const result = await measure(['pipelines', '20000']);
    expect(result.held).toBe(20_000);
    expect(result.bytesPerPipeline).toBeGreaterThan(0);
    expect(result.bytesPerPipeline).toBeLessThanOrEqual(1_000);
  }, 60_000);

  it('a keyed pipeline keeps a bounded number of per-key pipelines: many keys cost what the registry keeps', async () => {
    const result = await measure(['keyed-pipeline', '200000']);
    expect(result.held).toBe(200_000);
    // An idle key costs the registry under 200 bytes; a pipeline kept per key would add 1.4 kB.
    expect(result.bytesPerKey).toBeGreaterThan(0);
    expect(result.bytesPerKey).toBeLessThanOrEqual(300);
  }, 60_000);

  it('pushing many distinct keys through a capped registry keeps the heap flat', async () => {
    const result = await measure(['churn', '300000', '50000']);
    expect(result.held).toBe(50_000);
    // After the key index has grown its table once (second round), the heap stays flat.
    expect(Math.abs(result.growthAfterTwoRounds!)).toBeLessThan(0.05);
    expect(result.growth).toBeLessThan(0.3);
  }, 60_000);
});
