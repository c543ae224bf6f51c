/**
 * The package as users install it: `npm pack`, then the tarball installed offline into a scratch
 * project (test/support/packed.ts), where an ES module and a CommonJS program each load every
 * subpath in package.json `exports` and use something from it, and the TypeScript consumer of
 * test/package/fixtures/consumer.ts (every entry point) type-checks, declarations included,
 * under moduleResolution node10, node16 and nodenext (as an ES module and as CommonJS) and
 * bundler, with TypeScript 5 and 7 (which has no node10). attw's view of the tarball is a committed snapshot. `npm test` builds before Vitest.
 */

import { execFile } from 'node:child_process';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entries } from '../../tsdown.config';
import { root } from '../support/build.js';
import {
  installPacked,
  type PackedInstall,
  runInProject,
  typeCheckProject,
} from '../support/packed.js';

/** A use of one subpath: an async function of its module namespace, and what it returns. */
interface Use {
  readonly specifier: string;
  readonly use: string;
  readonly expected: unknown;
}

/** One use per subpath, each of something that works only when the entry really loaded. */
const uses: readonly Use[] = [
  {
    specifier: 'breakwater',
    use: `async (m) => {
      let calls = 0;
      const p = m.pipeline(m.retry({ maxAttempts: 2, delay: 0 }), m.circuitBreaker());
      const value = await p.execute(() => { if (++calls < 2) throw new Error('once'); return calls; });
      return [m.VERSION, value];
    }`,
    expected: ['0.1.0', 2],
  },
  {
    specifier: 'breakwater/testing',
    use: `async (m) => {
      const clock = new m.ManualClock();
      let fired = 0;
      clock.setTimer(() => fired++, 10);
      clock.advance(9);
      const early = fired;
      clock.advance(1);
      return [early, fired];
    }`,
    expected: [0, 1],
  },
  {
    // The legacy decorator form, applied by hand: plain JavaScript has no decorator syntax yet.
    specifier: 'breakwater/decorators',
    use: `async (m) => {
      let calls = 0;
      class Service { async call() { if (++calls < 2) throw new Error('once'); return 'ok'; } }
      const before = Object.getOwnPropertyDescriptor(Service.prototype, 'call');
      const after = m.retry({ maxAttempts: 2, delay: 0 })(Service.prototype, 'call', before);
      Object.defineProperty(Service.prototype, 'call', after);
      return [await new Service().call(), calls];
    }`,
    expected: ['ok', 2],
  },
  {
    specifier: 'breakwater/redis',
    use: `async (m) => [/^[0-9a-f]{40}$/.test(m.GCRA_SCRIPT_SHA), m.isStoreError(new Error('x'))]`,
    expected: [true, false],
  },
  {
    specifier: 'breakwater/http',
    use: `async (m) => [m.parseRetryAfter('120'), m.DEADLINE_HEADER]`,
    expected: [120_000, 'x-timeout-ms'],
  },
  {
    specifier: 'breakwater/observability',
    use: `async (m) => {
      const server = createServer(m.createObservabilityHandler());
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const response = await fetch('http://127.0.0.1:' + server.address().port + '/health');
        return response.status;
      } finally {
        server.close();
      }
    }`,
    expected: 200,
  },
  {
    specifier: 'breakwater/prometheus',
    use: `async (m) => {
      const register = new PromRegistry();
      m.registerBreakwaterMetrics(register);
      return (await register.metrics()).includes('# TYPE breakwater_circuit_breaker_state');
    }`,
    expected: true,
  },
  {
    specifier: 'breakwater/opentelemetry',
    use: `async (m) => {
      const stop = m.observeBreakwaterMetrics(metrics.getMeter('consumer'));
      stop();
      return typeof stop;
    }`,
    expected: 'function',
  },
  {
    specifier: 'breakwater/kinds',
    use: `async (m) => [typeof m.POLICY_KIND, m.NEEDS_NOTHING.callSlot, typeof m.defineKind]`,
    expected: ['symbol', false, 'function'],
  },
  {
    specifier: 'breakwater/workers',
    use: `async (m) => {
      const here = new m.SharedRateLimiter({ limit: 1, period: 60_000 });
      const there = new m.SharedRateLimiter(structuredClone(here.state));
      // tryAcquire answers 0 when it took a permit, else the ms until the next one.
      return [here.tryAcquire() === 0, there.tryAcquire() > 0];
    }`,
    expected: [true, true],
  },
];

/** The same program as an ES module or as CommonJS: it prints `{ specifier: result }`. */
function program(format: 'esm' | 'cjs'): string {
  const esm = format === 'esm';
  const prelude = esm
    ? [
        "import { createServer } from 'node:http';",
        "import { Registry as PromRegistry } from 'prom-client';",
        "import { metrics } from '@opentelemetry/api';",
        ...uses.map((u, i) => `import * as m${i} from '${u.specifier}';`),
      ]
    : [
        "const { createServer } = require('node:http');",
        "const { Registry: PromRegistry } = require('prom-client');",
        "const { metrics } = require('@opentelemetry/api');",
        ...uses.map((u, i) => `const m${i} = require('${u.specifier}');`),
      ];
  return [
    ...prelude,
    'const results = {};',
    esm ? '' : '(async () => {',
    ...uses.map((u, i) => `results['${u.specifier}'] = await (${u.use})(m${i});`),
    'console.log(JSON.stringify(results));',
    esm ? '' : '})();',
  ].join('\n');
}

let project: PackedInstall;

beforeAll(async () => {
  project = await installPacked();
}, 120_000);

afterAll(async () => {
  await project?.remove();
});

it('the uses cover every subpath in package.json exports', () => {
  expect(uses.map((u) => u.specifier)).toEqual(
    Object.keys(entries).map((s) => (s === '.' ? 'breakwater' : `breakwater/${s.slice(2)}`)),
  );
});

describe.each(['esm', 'cjs'] as const)('a %s program in the installed project', (format) => {
  it('loads every subpath and uses something from each', async () => {
    const file = format === 'esm' ? 'consumer.mjs' : 'consumer.cjs';
    await writeFile(join(project.dir, file), program(format));
    const results = JSON.parse(await runInProject(project.dir, file)) as Record<string, unknown>;
    expect(results).toEqual(Object.fromEntries(uses.map((u) => [u.specifier, u.expected])));
  }, 60_000);
});

/** tsconfig compiler options for each resolution, and the files each compiles. */
const typeScriptSetups = {
  // `module: commonjs` implies node10, which reads no `exports`: the subpaths need typesVersions.
  node10: { options: { module: 'commonjs', moduleResolution: 'node10' }, files: ['consumer.ts'] },
  // With "type": "module", consumer.ts is an ES module and consumer.cts CommonJS.
  node16: {
    options: { module: 'node16', moduleResolution: 'node16' },
    files: ['consumer.ts', 'consumer.cts'],
  },
  nodenext: {
    options: { module: 'nodenext', moduleResolution: 'nodenext' },
    files: ['consumer.ts', 'consumer.cts'],
  },
  bundler: { options: { module: 'esnext', moduleResolution: 'bundler' }, files: ['consumer.ts'] },
} as const;

/** Each compiler with the resolutions it has: TypeScript 7 removed node10. */
const typeScriptRuns = [
  ...(['node10', 'node16', 'nodenext', 'bundler'] as const).map(
    (resolution) => ['TypeScript 5', resolution, 'typescript'] as const,
  ),
  ...(['node16', 'nodenext', 'bundler'] as const).map(
    (resolution) => ['TypeScript 7', resolution, 'typescript7'] as const,
  ),
];

describe('TypeScript in the installed project', () => {
  beforeAll(async () => {
    const fixture = join(root, 'test/package/fixtures/consumer.ts');
    await copyFile(fixture, join(project.dir, 'consumer.ts'));
    await copyFile(fixture, join(project.dir, 'consumer.cts'));
  });

  it.each(typeScriptRuns)(
    'the consumer of every entry point type-checks with %s under moduleResolution %s',
    async (_label, resolution, compiler) => {
      const setup = typeScriptSetups[resolution];
      const tsconfig = `tsconfig.${resolution}.json`;
      const compilerOptions = {
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        ...setup.options,
        strict: true,
        noEmit: true,
        // The package's declarations are checked too: a public type naming a stripped one fails.
        skipLibCheck: false,
        types: ['node'],
        pretty: false,
      };
      await writeFile(
        join(project.dir, tsconfig),
        JSON.stringify({ compilerOptions, files: setup.files }),
      );
      expect(await typeCheckProject(project.dir, tsconfig, compiler)).toBe('');
    },
    // A whole tsc run: seconds on a quiet machine, far more under load. The limit only catches
    // a compiler that hangs.
    120_000,
  );
});

/**
 * attw's report on the tarball: one line per entry point and resolution (its types, its code, its
 * problems), and the problems found.
 */
async function attwReport(tarball: string): Promise<{ text: string; problems: string[] }> {
  const attw = join(root, 'node_modules/@arethetypeswrong/cli/dist/index.js');
  // attw exits 1 when it finds a problem; the JSON on stdout says which.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [attw, tarball, '--format', 'json'],
    { cwd: root, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  type Resolved = { fileName: string } | undefined;
  const { analysis } = JSON.parse(stdout) as {
    analysis: {
      entrypoints: Record<
        string,
        {
          resolutions: Record<
            string,
            { resolution?: Resolved; implementationResolution?: Resolved }
          >;
        }
      >;
      problems: { kind: string; entrypoint?: string; resolutionKind?: string }[];
    };
  };
  const file = (r: Resolved) => (r ? r.fileName.replace('/node_modules/breakwater/', '') : '-');
  const lines = ['entry point | resolution | types | code | problems'];
  for (const [entry, { resolutions }] of Object.entries(analysis.entrypoints)) {
    for (const [kind, r] of Object.entries(resolutions)) {
      const problems = analysis.problems
        .filter((p) => p.entrypoint === entry && p.resolutionKind === kind)
        .map((p) => p.kind);
      lines.push(
        `${entry} | ${kind} | ${file(r.resolution)} | ${file(r.implementationResolution)} | ${problems.join(', ') || 'none'}`,
      );
    }
  }
  const problems = analysis.problems.map(
    (p) => `${p.kind}${p.entrypoint ? ` (${p.entrypoint}, ${p.resolutionKind})` : ''}`,
  );
  lines.push(`problems of the whole package: ${problems.length === 0 ? 'none' : problems.length}`);
  return { text: `${lines.join('\n')}\n`, problems };
}

it('attw finds no problem and resolves every entry point under node10, node16 (CJS and ESM) and bundler as the snapshot says', async () => {
  const report = await attwReport(project.tarball);
  expect(report.problems).toEqual([]);
  // Rewritten by `npx vitest run test/package/installed.test.ts -u` after a deliberate change.
  await expect(report.text).toMatchFileSnapshot('./snapshots/attw.txt');
}, 120_000);
