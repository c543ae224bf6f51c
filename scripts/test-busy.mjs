// @ts-check
/**
 * `npm run test:busy`: the suites that run on real time (Redis servers, child processes, HTTP on
 * loopback, the demo) with CPU-bound burner processes beside them, twice as many as the machine
 * has cores, as on a shared CI machine at a load average of 6-12 on 2 cores. A test that goes
 * red here because the machine is slow is a defect of the test.
 *
 * Usage: node scripts/test-busy.mjs [--repeat N] [test files or folders...]
 * With --repeat N the suites run N times in a row, stopping at the first red run. Files given
 * replace the default list. The package is built first (some suites run the built dist/).
 */
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

/** Suites on real time, chosen by reading the tests; everything else runs on the manual clock. */
const realTimeSuites = [
  'test/redis/',
  'test/demo/',
  'test/examples/',
  'test/http/',
  'test/hygiene/',
  'test/observability/',
  'test/clock/system-clock.test.ts',
  'test/clock/wakeups.test.ts',
  'test/package/dual-copies.test.ts',
  'test/package/exports.test.ts',
  'test/policies/http-overload.test.ts',
  'test/policies/retry-budget/http-storm.test.ts',
  'test/readme/',
  'test/registry/keyed-memory.test.ts',
  'test/support/overloadServer.test.ts',
];

/**
 * Spins until its parent is gone: checking the parent's pid every 50 ms makes a burner exit
 * even when the runner is killed with SIGKILL and has no chance to kill it.
 */
const burnerSource = `
const parent = process.ppid;
for (;;) {
  const until = Date.now() + 50;
  while (Date.now() < until) {}
  if (process.ppid !== parent) process.exit(0);
}`;

function parseArgs(argv) {
  let repeat = 1;
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--repeat') {
      repeat = Number(argv[++i]);
      if (!Number.isInteger(repeat) || repeat < 1) {
        console.error(`test:busy: --repeat takes a whole number >= 1, got ${argv[i]}`);
        process.exit(2);
      }
    } else files.push(argv[i]);
  }
  return { repeat, files: files.length > 0 ? files : realTimeSuites };
}

const fmtLoad = (l) => l.map((x) => x.toFixed(2)).join(' ');
const fmtTime = (ms) => `${Math.floor(ms / 60_000)} min ${((ms % 60_000) / 1000).toFixed(0)} s`;

const { repeat, files } = parseArgs(process.argv.slice(2));

const build = spawnSync('npm', ['run', 'build:quiet', '--silent'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  console.error(`test:busy: the build failed (exit ${build.status})`);
  process.exit(1);
}

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();
const killAll = () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
};
// Every way out kills the burners: a normal end, an exception, Ctrl-C, a terminal closing.
process.on('exit', killAll);
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) {
  process.on(signal, () => {
    killAll();
    console.error(`\ntest:busy: stopped by ${signal}`);
    process.exit(130);
  });
}

const burners = 2 * availableParallelism();
for (let i = 0; i < burners; i++) {
  const burner = spawn(process.execPath, ['-e', burnerSource], { stdio: 'ignore' });
  children.add(burner);
  burner.on('exit', () => children.delete(burner));
}
console.log(
  `test:busy: ${burners} burner processes on ${availableParallelism()} cores; load average ${fmtLoad(loadavg())}`,
);

let peakLoad = 0;
const sampler = setInterval(() => {
  peakLoad = Math.max(peakLoad, loadavg()[0]);
}, 1000);

/** @returns {Promise<number>} vitest's exit code */
function runSuites() {
  return new Promise((resolve, reject) => {
    const vitest = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...files], {
      cwd: root,
      stdio: 'inherit',
    });
    children.add(vitest);
    vitest.on('error', reject);
    vitest.on('exit', (code, signal) => {
      children.delete(vitest);
      resolve(code ?? (signal === null ? 1 : 128));
    });
  });
}

const began = performance.now();
let code = 0;
let run = 0;
while (run < repeat && code === 0) {
  run++;
  const runBegan = performance.now();
  code = await runSuites();
  console.log(
    `test:busy: run ${run}/${repeat} ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${fmtTime(performance.now() - runBegan)}; load average ${fmtLoad(loadavg())}`,
  );
}
clearInterval(sampler);
killAll();
console.log(
  `test:busy: ${code === 0 ? `${run} run(s) passed` : `red at run ${run}`} in ${fmtTime(performance.now() - began)}; peak 1-minute load average ${peakLoad.toFixed(2)}`,
);
process.exitCode = code;
