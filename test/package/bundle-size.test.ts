/**
 * What a browser application pays for the four everyday policies: the BUILT package (what npm
 * publishes; the `browser` condition of package.json `exports` selects dist/browser/, one
 * module per source module) bundled by esbuild for the browser, minified, from an entry that imports
 * `retry`, `circuitBreaker`, `timeout`, `bulkhead` and `pipeline` from 'breakwater'. The
 * metafile names every module that put bytes in the bundle: none may come from the registry,
 * config reading, exporters, decorators or the optional subpaths, and the README's figure must be
 * the measured one. It builds nothing: `npm test` runs `npm run build` before Vitest.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { browserDir } from '../../tsdown.config';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The most the bundle may weigh, minified, in bytes. The target is 25,000 (about twice
 * cockatiel's 11.7 kB for the same four policies); the bundle is above it, so this ceiling is
 * what it weighs now plus a little, lowered as it shrinks, and raised only for a feature of the
 * executor every pipeline has (a call's own deadline: 66.3 to 69.4 kB; a call's criticality:
 * 73.1 to 73.6 kB; the retry budget's hooks in the executor and the retry: 73.6 to 74.8 kB;
 * the executor's hedge case, whose race code stays with the hedge policy: 74.8 to 75.5 kB;
 * timeouts outside a hedge bounding its pushback waits, and the pushback question the retry
 * shares with the hedge: +57 B; the executor keeping a call's deadline for the gates that read
 * it: +0.3 kB; timing calls that carry a deadline for a gate that compares deadlines with
 * their durations: +0.23 kB) or of one of the four policies that cannot be left out of a
 * program that does not use it (the bulkhead's queue disciplines, LIFO and CoDel, and the compaction of its
 * queue: 69.4 to 73.1 kB; the breaker's probe gate, which shared signals lease half-open probes
 * through: +25 B; the bulkhead's queue made a module of its own, shared with the adaptive
 * limit: +0.7 kB; together 75.5 to 76.69 kB, then 76.93 kB with the deadline timing; calls
 * misused, with a `fn` that is not a function or a `signal` that is not an AbortSignal, refused
 * before any policy admits them, and the timeout's timer kept referenced only while a call
 * waits: +0.57 kB; the deadline an attempt reads found, at the first read, from the timeouts
 * around it: +1.23 kB; gates released through one set of functions on every path: -0.07 kB;
 * the breaker's half-open refusal error, its backoff decay and a consecutive window's run in
 * its transitions: +1.06 kB; refusing arguments a factory or constructor does not take:
 * +0.3 kB; counting listener errors: +0.2 kB; a coarse deadline queue whose timer keeps its
 * hold until it fires when it ticks often: +0.1 kB; a gate answering a call with a value of its
 * own, on every path of the executor: +0.41 kB; 80.73 kB in all). What the bytes are spent
 * on is logged by area on every run.
 */
const TARGET_BYTES = 60_000;
const CEILING_BYTES = 80_800;

/** Folders of src/ that a program using only policies and pipelines must not pay for. */
const UNUSED_FOLDERS = [
  'registry',
  'exporters',
  'decorators',
  'http',
  'observability',
  'prometheus',
  'opentelemetry',
  'redis',
  'testing',
];
/**
 * Modules that exist for the registry and the exporters: the list of kinds, the kind descriptor
 * protocol and metric family descriptors, in a policy folder its descriptor, config schema,
 * keyed group, metric families, and the reads of idle numbers and counts; and the keyed
 * pipeline, which only a registry's keyed step brings in.
 */
const REGISTRY_FILES =
  /^(?:policies\/kinds|protocol\/kind|telemetry\/metricFamily|policies\/[^/]+\/(?:kind|config|keyed|metrics|idle|counts)|pipeline\/Keyed(?:Pipeline|Step))$/;

/** Where the bytes go, by area: the first pattern a module matches names its area. */
const AREAS: readonly (readonly [string, RegExp])[] = [
  ['pipeline (executor)', /^pipeline\//],
  ['circuit breaker', /^policies\/circuit-breaker\//],
  ['bulkhead', /^policies\/bulkhead\//],
  ['retry', /^policies\/retry\//],
  ['timeout', /^policies\/timeout\//],
  ['deadline queue (bulkhead, timeout)', /^policies\/shared\/DeadlineQueue$/],
  ['wait queue (bulkhead)', /^policies\/shared\/WaitQueue$/],
  ['option checks', /^validation\//],
  ['errors', /^errors\//],
  ['latency metrics', /^telemetry\/(?:LatencyHistogram|metrics)$/],
  ['clock', /^clock\//],
  ['the rest', /./],
];

function byArea(modules: Map<string, number>): string {
  const sums = new Map<string, number>(AREAS.map(([area]) => [area, 0]));
  for (const [module, bytes] of modules) {
    const [area] = AREAS.find(([, pattern]) => pattern.test(module))!;
    sums.set(area, sums.get(area)! + bytes);
  }
  return [...sums].map(([area, bytes]) => `${area} ${bytes}`).join(', ');
}

/** The import sets the README's size table gives, each bundled the same way. */
const IMPORT_SETS = [
  { label: 'retry alone', entry: "export { retry } from 'breakwater';\n" },
  { label: 'retry and timeout', entry: "export { retry, timeout, pipeline } from 'breakwater';\n" },
  {
    label: 'the four basic policies',
    entry: "export { retry, circuitBreaker, timeout, bulkhead, pipeline } from 'breakwater';\n",
  },
  { label: 'everything the root exports', entry: "export * from 'breakwater';\n" },
] as const;
type SetLabel = (typeof IMPORT_SETS)[number]['label'];

interface Bundle {
  readonly bytes: number;
  readonly gzip: number;
  readonly modules: Map<string, number>;
}

const bundles = new Map<SetLabel, Bundle>();

async function bundleOf(entry: string): Promise<Bundle> {
  const result = await build({
    stdin: { contents: entry, resolveDir: root, loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    // Not the repository's tsconfig.json, whose `paths` map 'breakwater' to src/: the package
    // resolves by its name through package.json `exports`, as it does for its users.
    tsconfigRaw: {},
    logLevel: 'silent',
  });
  expect(result.warnings).toEqual([]);
  const code = result.outputFiles[0].contents;
  return { bytes: code.length, gzip: gzipSync(code).length, modules: modulesOf(result.metafile) };
}

/** A size as the README's table gives it: kB with one decimal. */
function kB(bytes: number): string {
  return `${(bytes / 1000).toFixed(1)} kB`;
}

beforeAll(async () => {
  if (!existsSync(`${root}${browserDir}/index.js`)) {
    throw new Error(
      `The package is not built (missing ${browserDir}/index.js): run npm run build first ` +
        '(npm test does this before running Vitest).',
    );
  }
  for (const { label, entry } of IMPORT_SETS) {
    const bundle = await bundleOf(entry);
    bundles.set(label, bundle);
    console.log(
      `browser bundle of ${label}: ${bundle.bytes} B minified, ${bundle.gzip} B gzipped, ` +
        `from ${bundle.modules.size} modules; by area, in B: ${byArea(bundle.modules)}`,
    );
  }
  console.log(`(four basic policies: ceiling ${CEILING_BYTES} B, target ${TARGET_BYTES} B)`);
});

/** Source module (path under src/, no extension) -> bytes it put in the bundle. */
function modulesOf(metafile: Metafile): Map<string, number> {
  const [output] = Object.values(metafile.outputs);
  const modules = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    if (bytesInOutput === 0) continue;
    if (!input.startsWith(`${browserDir}/`) || !input.endsWith('.js')) {
      throw new Error(`bundled an input from outside ${browserDir}/: ${input}`);
    }
    modules.set(input.slice(browserDir.length + 1, -'.js'.length), bytesInOutput);
  }
  return modules;
}

const FOUR: SetLabel = 'the four basic policies';

describe('the browser bundles of retry, of retry and timeout, and of the four basic policies', () => {
  const small = IMPORT_SETS.filter((set) => set.label !== 'everything the root exports');

  it('come from dist files that mirror source modules one to one, so the metafile names them', () => {
    for (const bundle of bundles.values()) {
      for (const module of bundle.modules.keys()) {
        expect(existsSync(`${root}src/${module}.ts`), `src/${module}.ts`).toBe(true);
      }
    }
  });

  it('hold nothing of the registry, config reading, exporters, decorators or optional subpaths', () => {
    for (const { label } of small) {
      const unused = [...bundles.get(label)!.modules.keys()].filter(
        (module) => UNUSED_FOLDERS.includes(module.split('/')[0]) || REGISTRY_FILES.test(module),
      );
      expect(unused, label).toEqual([]);
    }
  });

  it(`weigh, for the four basic policies, at most ${CEILING_BYTES} bytes minified`, () => {
    expect(bundles.get(FOUR)!.bytes).toBeLessThanOrEqual(CEILING_BYTES);
  });

  it("are, with the root's every export, what the README's table says they weigh", () => {
    const readme = readFileSync(`${root}README.md`, 'utf8');
    const measured = IMPORT_SETS.map(({ label }) => {
      const { bytes, gzip } = bundles.get(label)!;
      return `| ${label} | ${kB(bytes)} | ${kB(gzip)} |`;
    });
    const stated = IMPORT_SETS.map(({ label }) => {
      const row = readme.split('\n').find((line) => line.startsWith(`| ${label} |`));
      return row?.replace(/\s*\|\s*/g, ' | ').trim();
    });
    expect(stated, `the README's size table should read:\n${measured.join('\n')}`).toEqual(
      measured,
    );
  });
});
