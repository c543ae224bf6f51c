/**
 * Smoke test of the BUILT package (dist/), loaded by its own name through package.json
 * `exports` (self-reference), the way consumers load it. It builds nothing: `npm test` runs
 * `npm run build` before Vitest. Build entries are listed once, in tsdown.config.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { browserDir, entries, outputName } from '../../tsdown.config';
import { typeCheckConsumer } from '../support/consumer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, unknown>;
};
const require = createRequire(import.meta.url);
const subpaths = Object.keys(entries);

/** What package.json `exports[subpath]` must be for a build entry. */
function expectedExport(subpath: string) {
  const base = `./dist/${outputName(subpath)}`;
  return {
    // Bundlers for the browser take the build of one module per file (tsdown.config.ts).
    browser: { types: `${base}.d.ts`, default: `./${browserDir}/${outputName(subpath)}.js` },
    import: { types: `${base}.d.ts`, default: `${base}.js` },
    require: { types: `${base}.d.cts`, default: `${base}.cjs` },
  };
}

function specifier(subpath: string): string {
  return subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
}

beforeAll(() => {
  const missing = subpaths
    .flatMap((s) => Object.values(expectedExport(s)).flatMap((c) => Object.values(c)))
    .filter((file) => !existsSync(`${root}${file}`));
  if (missing.length > 0) {
    throw new Error(
      `The package is not built (missing ${missing.join(', ')}): run npm run build first ` +
        '(npm test does this before running Vitest).',
    );
  }
});

describe('package.json exports', () => {
  it('has a browser/import/require block for every build entry in tsdown.config.ts', () => {
    for (const subpath of subpaths) {
      expect(pkg.exports[subpath], `exports["${subpath}"]`).toEqual(expectedExport(subpath));
    }
  });

  it('maps every subpath to its CommonJS types in typesVersions, for moduleResolution node10', () => {
    const typesVersions = (pkg as { typesVersions?: Record<string, Record<string, string[]>> })
      .typesVersions;
    const expected = Object.fromEntries(
      subpaths.filter((s) => s !== '.').map((s) => [s.slice(2), [expectedExport(s).require.types]]),
    );
    expect(typesVersions).toEqual({ '*': expected });
  });

  it('exports nothing that is not built', () => {
    const extra = Object.keys(pkg.exports).filter(
      (k) => k !== './package.json' && !subpaths.includes(k),
    );
    expect(extra).toEqual([]);
  });
});

describe.each(subpaths)('entry %s', (subpath) => {
  const spec = specifier(subpath);

  it(`require('${spec}') loads the CommonJS build`, () => {
    const resolved = require.resolve(spec);
    expect(resolved.endsWith(`${outputName(subpath)}.cjs`)).toBe(true);
    const mod = require(spec) as Record<string, unknown>;
    if (subpath === '.') expect(mod.VERSION).toBe(pkg.version);
  });

  it(`import('${spec}') loads the ESM build`, async () => {
    const mod = (await import(/* @vite-ignore */ spec)) as Record<string, unknown>;
    if (subpath === '.') expect(mod.VERSION).toBe(pkg.version);
  });
});

it('plain Node (outside Vitest) loads every entry through import and require, and the browser build, with the same exports', async () => {
  // Vitest resolves `import()` itself; this checks Node's own ESM and CJS loaders.
  const script = `
    import { createRequire } from 'node:module';
    const require = createRequire(process.cwd() + '/');
    const out = {};
    for (const [spec, browserFile] of JSON.parse(process.argv[1])) {
      const esm = await import(spec);
      const cjs = require(spec);
      const browser = await import(browserFile);
      const names = (m) => Object.keys(m).filter((k) => k !== '__esModule' && k !== 'default').sort();
      out[spec] = {
        esm: names(esm), cjs: names(cjs), browser: names(browser),
        esmFile: import.meta.resolve(spec), cjsFile: require.resolve(spec),
        esmVersion: esm.VERSION, cjsVersion: cjs.VERSION,
      };
    }
    console.log(JSON.stringify(out));
  `;
  const specs = subpaths.map((s) => [
    specifier(s),
    pathToFileURL(`${root}${browserDir}/${outputName(s)}.js`).href,
  ]);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '--eval', script, JSON.stringify(specs)],
    { cwd: root },
  );
  const out = JSON.parse(stdout) as Record<
    string,
    {
      esm: string[];
      cjs: string[];
      browser: string[];
      esmFile: string;
      cjsFile: string;
      esmVersion: unknown;
      cjsVersion: unknown;
    }
  >;
  for (const subpath of subpaths) {
    const r = out[specifier(subpath)];
    expect(r.esmFile.endsWith(`/dist/${outputName(subpath)}.js`), r.esmFile).toBe(true);
    expect(r.cjsFile.endsWith(`/dist/${outputName(subpath)}.cjs`), r.cjsFile).toBe(true);
    expect(r.cjs, `${specifier(subpath)}: CJS and ESM export the same names`).toEqual(r.esm);
    expect(r.browser, `${specifier(subpath)}: the browser build exports the same names`).toEqual(
      r.esm,
    );
  }
  expect(out[pkg.name].esmVersion).toBe(pkg.version);
  expect(out[pkg.name].cjsVersion).toBe(pkg.version);
});

// `moduleResolution: node` (node10) is what `module: commonjs` implies, and what NestJS 10
// projects use: it reads no `exports`, so the subpaths need `typesVersions`.
it.each(['node10', 'node16', 'bundler'] as const)(
  'a TypeScript consumer with moduleResolution %s type-checks against every entry',
  async (resolution) => {
    const consumer = `
        import { CircuitBreaker, pipeline, VERSION } from 'breakwater';
        import { ManualClock } from 'breakwater/testing';
        import { circuitBreaker } from 'breakwater/decorators';
        import { adaptClient } from 'breakwater/redis';
        import { createObservabilityHandler } from 'breakwater/observability';
        import { registerBreakwaterMetrics } from 'breakwater/prometheus';
        import { observeBreakwaterMetrics } from 'breakwater/opentelemetry';
        import { defineKind, NEEDS_NOTHING } from 'breakwater/kinds';
        import { SharedRateLimiter } from 'breakwater/workers';

        const clock: ManualClock = new ManualClock();
        const breaker: CircuitBreaker = new CircuitBreaker({ clock });
        export const used = [
          pipeline(breaker), VERSION.length, circuitBreaker, adaptClient,
          createObservabilityHandler, registerBreakwaterMetrics, observeBreakwaterMetrics,
          defineKind, NEEDS_NOTHING.callSlot, SharedRateLimiter,
        ];
        // @ts-expect-error: a typo is caught, so the types really were found.
        export const wrong: number = VERSION;
      `;
    expect(await typeCheckConsumer(consumer, { resolution })).toBe('');
  },
  // A whole tsc run in a child process: some 5 s on a quiet 2-core machine, past 20 s at a load
  // average of 15. The limit only catches a compiler that hangs.
  120_000,
);
