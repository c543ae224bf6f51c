/**
 * The import graph of src/ follows the layers of docs/architecture.md: a file imports only from
 * its own layer or the layers below it, a policy only from its own folder, policies/shared and
 * the layers below, and the core entry point reaches no optional subpath.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** Bottom to top. A top-level folder of src/ (or a file directly in it) belongs to one layer. */
const LAYERS: readonly (readonly string[])[] = [
  ['version.ts', 'errors', 'events', 'validation'],
  ['clock', 'protocol', 'telemetry'],
  ['pipeline'],
  ['policies'],
  ['registry'],
  ['exporters'],
  ['decorators', 'index.ts'],
  ['http', 'observability', 'prometheus', 'opentelemetry', 'redis', 'testing', 'kinds', 'workers'],
];
/** The folders behind optional subpath exports, which the core must never load. */
const OPTIONAL = [
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

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The src/ files a file imports (type-only imports included: they tie the layers too). */
function importsOf(file: string): string[] {
  // Doc comments hold examples that import from a reader's own files: only code counts.
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) =>
    relative(src, normalize(join(dirname(file), m[1]!.replace(/\.js$/, '.ts')))),
  );
}

const top = (path: string): string => path.split('/')[0]!;
const layerOf = (path: string): number => {
  const layer = LAYERS.findIndex((names) => names.includes(top(path)));
  if (layer === -1) throw new Error(`src/${path} is in no layer of test/architecture`);
  return layer;
};
/** `policies/<kind>` for a file of a policy's own folder, else undefined. */
const policyFolder = (path: string): string | undefined => {
  const [first, second, third] = path.split('/');
  return first === 'policies' && third !== undefined && second !== 'shared'
    ? `policies/${second}`
    : undefined;
};

const files = sources(src).map((f) => relative(src, f));
const graph = new Map(files.map((f) => [f, importsOf(join(src, f))]));

describe('the import graph of src/', () => {
  it('places every file in a layer and every import at an existing file', () => {
    for (const [file, imports] of graph) {
      layerOf(file);
      for (const target of imports) expect(files, `${file} imports ${target}`).toContain(target);
    }
  });

  it('has no import that runs upward', () => {
    const upward = [...graph].flatMap(([file, imports]) =>
      imports
        .filter((target) => layerOf(target) > layerOf(file))
        .map((target) => `${file} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('keeps each policy to its own folder, policies/shared and the layers below', () => {
    const across = [...graph].flatMap(([file, imports]) => {
      const own = policyFolder(file);
      if (own === undefined) return [];
      return imports
        .filter((target) => top(target) === 'policies')
        .filter((target) => policyFolder(target) !== undefined && policyFolder(target) !== own)
        .map((target) => `${file} -> ${target}`);
    });
    expect(across).toEqual([]);
  });

  it('loads no optional subpath from the core entry point', () => {
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const target of graph.get(file) ?? []) visit(target);
    };
    visit('index.ts');
    expect([...reached].filter((f) => OPTIONAL.includes(top(f)))).toEqual([]);
  });

  it('finds the arrows it is meant to forbid', () => {
    // The checks above would pass on an empty graph: make sure they see real imports.
    expect(graph.get('policies/retry/Retry.ts')?.some((t) => top(t) === 'pipeline')).toBe(true);
    expect(layerOf('registry/Registry.ts')).toBeGreaterThan(layerOf('policies/factories.ts'));
    expect(layerOf('policies/factories.ts')).toBeGreaterThan(layerOf('pipeline/Pipeline.ts'));
  });
});
