/**
 * What a browser application pays for what it imports: the BUILT package (what npm publishes;
 * the `browser` condition of package.json `exports` selects dist/browser/, one module per source
 * module) bundled by esbuild for the browser, minified, once per import set of the README's size
 * table. The metafile names every module that put bytes in a bundle: none of the policy sets
 * may take one from the registry, config reading, exporters, decorators or the optional
 * subpaths, and the README's table must give the measured figures. It builds nothing: `npm test`
 * runs `npm run build` before Vitest.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { browserDir } from '../../tsdown.config';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The most the four basic policies' bundle may weigh, minified, in bytes: what it weighs now
 * plus a little, lowered as it shrinks. It was raised only for a feature of the executor every
 * pipeline has (a call's own deadline: 66.3 to 69.4 kB; a call's criticality: 73.1 to 73.6 kB;
 * the retry budget's hooks in the executor and the retry: 73.6 to 74.8 kB; the executor's hedge
 * case, whose race code stays with the hedge policy: 74.8 to 75.5 kB; timeouts outside a hedge
 * bounding its pushback waits, and the pushback question the retry shares with the hedge:
 * +57 B; the executor keeping a call's deadline for the gates that read it: +0.3 kB; timing
 * calls that carry a deadline for a gate that compares deadlines with their durations:
 * +0.23 kB) or of one of the four policies that cannot be left out of a program that does not
 * use it (the bulkhead's queue disciplines, LIFO and CoDel, and the compaction of its queue:
 * 69.4 to 73.1 kB; the breaker's probe gate, which shared signals lease half-open probes
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
 * own, on every path of the executor: +0.41 kB; 80.73 kB; a step that runs the steps inside it
 * itself generalised from the hedge to coalescing, the executor's coalescing case and the call's
 * `key` kept for it, whose flight code stays with the coalescing policy: +0.20 kB).
 *
 * Executor code that belongs to one kind comes with that kind, reached through its step rather
 * than carried by every pipeline (the hedge's race already did): the retry's wait before its
 * next attempt (`pipeline/retrySleep.ts`: -0.06 kB here, -0.70 kB for a circuit breaker
 * alone), the timeout's deadline checks (`pipeline/timeoutDeadline.ts`: -0.05 kB here,
 * -0.37 kB for a retry alone) and the awaiting of a fallback's asynchronous value
 * (`pipeline/fallbackValue.ts`: -0.13 kB for every program without a fallback): 80.49 kB.
 * Moving the retry's decision after a failed attempt too would save 0.3 kB where no retry is
 * imported and cost 0.09 kB in every set above, which all import one: left in the executor.
 *
 * What stands between 80.49 kB and the target of 60 kB (20.5 kB), measured by removing each
 * part from this bundle, with what would remove it:
 * - the gates-only paths (`executeGates`, the lone gate's, their handlers, cached refusals):
 *   2.51 kB. Gates may come from outside the library, so every pipeline carries them; without
 *   them gate pipelines run through the general executor, slowing the breaker-closed row.
 * - `executeSync` and its late-promise tracking: 1.66 kB. A method of every pipeline (and of
 *   every policy run alone); only a function imported apart would leave it out: an API change.
 * - features chosen by an option value or a call option, kept reachable: a gate's wait line in
 *   the executor 0.63 kB, attempts given up on by an aggressive timeout or a call's deadline
 *   1.06 kB, a call's own `timeout` 0.69 kB; the bulkhead's LIFO and CoDel orders and queue
 *   compaction in the deadline queue 1.54 kB; the breaker's windows other than the one chosen
 *   by `window.kind` (of count 1.19, time 1.87, consecutive 0.66 kB, chosen through makeWindow
 *   0.65 kB) about 3.4 kB, which a window given as an object would leave out (an API change).
 * - what every instance offers whether or not the program calls it: the breaker's stats,
 *   snapshot, reconfiguration and their option checks 2.04 kB, its manual control 0.70 kB, its
 *   listener methods 0.40 kB; the bulkhead's 1.43 kB and the timeout's and retry's 0.45 kB of
 *   the same. Functions imported apart (`breakerStats(b)`) would leave them out: an API change.
 * - option checks whose errors name the field, the value and the valid range (the breaker's
 *   4.22 kB, the retry's 1.48, the timeout's 0.84, the bulkhead's 0.40, the shared checks
 *   3.25 kB): a table-driven checker shared with the config schemas could carry the same
 *   messages in less, perhaps 3 to 4 kB less (not measured).
 * - names: 20.7 kB of the bundle are property names after a dot (`finishOrChain`, `slotOf`,
 *   `keepingAlive`...), which minifiers keep; a browser build that shortened the internal ones
 *   (not the public API or the gate protocol) would save an estimated 5 kB.
 * - the circuit breaker's state kept in objects of its own behind its public class (a
 *   controller, its tally, manual control, refusals, the announcer), so that no state is a
 *   member a user can write: +2.97 kB, the forwarding methods and getters between the parts;
 *   the refusal errors of the breaker and the bulkhead made in methods of their own, so that a
 *   refusal allocates nothing: +0.26 kB.
 * - a pipeline's plan made again when one of its steps stops or starts passing every call (a
 *   chaos step switched off or on), so that a step switched off costs the calls nothing (2 ns
 *   budget of benchmarks/scenarios/chaos.mjs): +0.09 kB.
 * What the bytes are spent on is logged by area on every run.
 */
const TARGET_BYTES = 60_000;
const CEILING_BYTES = 83_700;

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
  'kinds',
  'workers',
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
  { label: 'retry alone', kinds: ['retry'], entry: "export { retry } from 'breakwater';\n" },
  {
    label: 'circuit breaker alone',
    kinds: ['circuitBreaker'],
    entry: "export { circuitBreaker } from 'breakwater';\n",
  },
  {
    label: 'retry and timeout',
    kinds: ['retry', 'timeout'],
    entry: "export { retry, timeout, pipeline } from 'breakwater';\n",
  },
  {
    label: 'the four basic policies',
    kinds: ['retry', 'circuitBreaker', 'timeout', 'bulkhead'],
    entry: "export { retry, circuitBreaker, timeout, bulkhead, pipeline } from 'breakwater';\n",
  },
  { label: 'everything the root exports', kinds: ['*'], entry: "export * from 'breakwater';\n" },
] as const;

/**
 * Executor parts that come with a kind, reached through its step: each is known in a bundle by
 * its module and, where it has one, by a property only its code reads (the minifier keeps
 * property names), so a copy of it left in the executor would show too.
 */
const KIND_PARTS = [
  { kind: 'hedge', module: 'pipeline/HedgeRace', reads: '.lostReason(' },
  { kind: 'retry', module: 'pipeline/retrySleep', reads: '.sleeping.add(' },
  { kind: 'timeout', module: 'pipeline/timeoutDeadline', reads: '.aggressive' },
  { kind: 'fallback', module: 'pipeline/fallbackValue', reads: undefined },
] as const;
type SetLabel = (typeof IMPORT_SETS)[number]['label'];

interface Bundle {
  readonly text: string;
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
  const { contents, text } = result.outputFiles[0];
  return {
    text,
    bytes: contents.length,
    gzip: gzipSync(contents).length,
    modules: modulesOf(result.metafile),
  };
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

describe('the browser bundles of a retry, of a breaker, of retry and timeout, and of the four basic policies', () => {
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

  it('hold no part of the executor that comes with a kind they do not import', () => {
    for (const { label, kinds } of small) {
      const { modules, text } = bundles.get(label)!;
      const found = KIND_PARTS.filter(
        ({ kind }) => !(kinds as readonly string[]).includes(kind),
      ).flatMap(({ module, reads }) => [
        ...(modules.has(module) ? [module] : []),
        ...(reads !== undefined && text.includes(reads) ? [reads] : []),
      ]);
      expect(found, label).toEqual([]);
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
