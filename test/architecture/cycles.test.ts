/**
 * No circle of value imports among the files of src/: where two files need each other, the
 * back arrow is type-only (erased at compile time), so load order never decides what a module
 * sees. `export … from` re-exports count as value arrows.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Whether a statement's braces name only types (`{ type A, type B }`). */
const onlyTypes = (names: string): boolean =>
  names
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '')
    .every((n) => n.startsWith('type '));

/** The src/ files a file imports for their values (type-only imports left out). */
function valueImportsOf(file: string): string[] {
  // Doc comments hold examples that import from a reader's own files: only code counts.
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const statement =
    /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*'(\.{1,2}\/[^']+)'|import\s*\(\s*'(\.{1,2}\/[^']+)'\s*\)|(?:^|\n)\s*import\s+'(\.{1,2}\/[^']+)'/g;
  const targets: string[] = [];
  for (const m of text.matchAll(statement)) {
    const spec = m[4] ?? m[5] ?? m[6]!;
    if (m[4] !== undefined) {
      if (m[2] !== undefined) continue;
      const braces = /^\{([\s\S]*)\}$/.exec(m[3]!.trim());
      if (braces !== null && onlyTypes(braces[1]!)) continue;
    }
    targets.push(relative(src, normalize(join(dirname(file), spec.replace(/\.js$/, '.ts')))));
  }
  return targets;
}

/** Each circle once, as `a -> b -> … -> a`, found by Tarjan's strongly connected components. */
function circles(graph: Map<string, string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v))
      found.push(component.sort().join(' <-> '));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const files = sources(src).map((f) => relative(src, f));
const graph = new Map(files.map((f) => [f, valueImportsOf(join(src, f))]));

describe('the value import graph of src/', () => {
  it('has no circle of files whose back arrows are not type-only', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('sees value arrows and leaves type-only ones out', () => {
    // The check above would pass on an empty graph: make sure it reads real imports.
    expect(graph.get('index.ts')?.length).toBeGreaterThan(10);
    const sample = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['a.ts']],
      ['c.ts', []],
    ]);
    expect(circles(sample)).toEqual(['a.ts <-> b.ts']);
  });
});
