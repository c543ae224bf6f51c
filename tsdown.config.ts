import type { Rolldown, UserConfig } from 'tsdown';

/**
 * Public entry points of the package: the single place to list them.
 *
 * Key = subpath in package.json `exports`, value = source file.
 * Adding an entry here builds `dist/<name>/index.{js,cjs,d.ts,d.cts}`; the matching
 * `exports` block and `typesVersions` line (for TypeScript's node10 resolution) must then be
 * added to package.json (test/package/exports.test.ts fails until they are, and checks that the
 * built entry loads through `import` and `require`).
 */
export const entries = {
  '.': 'src/index.ts',
  './testing': 'src/testing/index.ts',
  './decorators': 'src/decorators/index.ts',
  './redis': 'src/redis/index.ts',
  './http': 'src/http/index.ts',
  './observability': 'src/observability/index.ts',
  './prometheus': 'src/prometheus/index.ts',
  './opentelemetry': 'src/opentelemetry/index.ts',
  './kinds': 'src/kinds/index.ts',
  './workers': 'src/workers/index.ts',
} as const satisfies Record<string, string>;

/** `'.'` -> `index`, `'./testing'` -> `testing/index` (output path under dist/, no extension). */
export function outputName(subpath: string): string {
  return subpath === '.' ? 'index' : `${subpath.slice(2)}/index`;
}

/**
 * Removes `import "./x.js"` / `require("./x.cjs")` lines that import a module of this package
 * for nothing but its side effects. Rolldown leaves one where it inlined every constant a
 * module imported; the package has no module side effects ("sideEffects": false), so such a
 * line does nothing, and bundlers warn about it (esbuild: ignored-bare-import).
 */
const BARE_IMPORT = /^(?:import "\.{1,2}\/[^"]+";|require\("\.{1,2}\/[^"]+"\);)\n/gm;

function dropBareImports(): Rolldown.Plugin {
  return {
    name: 'breakwater:drop-bare-imports',
    generateBundle(_options, bundle) {
      for (const file of Object.values(bundle)) {
        if (file.type === 'chunk') file.code = file.code.replace(BARE_IMPORT, '');
      }
    },
  };
}

/** Notices left out of the build output. */
const checks = {
  // CommonJS output is deliberate (dual package): no "CJS is legacy" notice.
  legacyCjs: false,
  // Rolldown's "significant time in plugin" notes are noise for a build this small.
  pluginTimings: false,
};

/** `entries` keyed by output name, as tsdown takes them. */
const entry = Object.fromEntries(
  Object.entries(entries).map(([subpath, file]) => [outputName(subpath), file]),
);

/** Where the browser build goes: package.json `exports` sends the `browser` condition there. */
export const browserDir = 'dist/browser';

export default [
  {
    entry,
    format: ['esm', 'cjs'],
    // With "type": "module": ESM -> .js/.d.ts, CJS -> .cjs/.d.cts.
    fixedExtension: false,
    platform: 'neutral',
    target: 'es2022',
    // Declarations marked `@internal` stay out of the published types (the type-check of src
    // and tests still sees them). test/package/declarations.test.ts holds it.
    dts: { compilerOptions: { stripInternal: true } },
    // No source maps: output is unminified and readable (with `//#region src/...` markers), and
    // tsdown 0.21 + sourcemap leaves a dangling `//# sourceMappingURL=*.d.ts.map` in the .d.ts
    // files.
    sourcemap: false,
    clean: true,
    checks,
  },
  // For bundlers (the `browser` condition): one ES module per source module, so that a bundler
  // sees the source's module graph and, with "sideEffects": false, leaves out every module a
  // program does not use (the registry, config reading, exporters). The merged chunks above
  // defeat that: a chunk holding the policies and the registry is kept whole by top-level
  // statements of classes the program never uses (test/package/bundle-size.test.ts). Node
  // keeps the merged chunks: loading some 160 files instead of a dozen makes
  // `import('breakwater')` several times slower.
  {
    entry,
    format: 'esm',
    fixedExtension: false,
    platform: 'neutral',
    target: 'es2022',
    outDir: browserDir,
    unbundle: true,
    plugins: [dropBareImports()],
    // Minifiers keep `Number.POSITIVE_INFINITY` as written (the source has some forty).
    define: { 'Number.POSITIVE_INFINITY': 'Infinity' },
    // Types come from the Node build (the same declarations).
    dts: false,
    sourcemap: false,
    clean: false,
    checks,
  },
] satisfies UserConfig[];
