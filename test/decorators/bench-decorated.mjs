#!/usr/bin/env node
// @ts-nocheck -- a plain script run against the built package (dist/), like benchmarks/.
/**
 * A decorated method against the same pipeline called directly (issue budget: at most +10 ns
 * per call). Runs on the built package: `npm run build && node test/decorators/bench-decorated.mjs`
 * (`--quick` for a smoke run). Decorators are applied by hand, exactly as compiled TC39
 * decorators apply them (the method on the prototype is replaced by what the decorator returns).
 *
 * Each pair runs in a child process of its own, each side with its own loop function; the two
 * sides run in alternating batches and the median batch is reported.
 */
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Bulkhead, CircuitBreaker, pipeline, Retry, Timeout } from 'breakwater';
import { bulkhead, circuitBreaker, retry, timeout } from 'breakwater/decorators';

const quick = process.argv.includes('--quick');
const BATCHES = quick ? 3 : 21;
const BATCH_MS = quick ? 5 : 60;
const WARMUP_MS = quick ? 20 : 1_000;

const AsyncFunction = (async () => {}).constructor;
const loops = {
  sync: () => new Function('op', 'n', 'let r; for (let i = 0; i < n; i++) r = op(i); return r;'),
  async: () =>
    new AsyncFunction('op', 'n', 'let r; for (let i = 0; i < n; i++) r = await op(i); return r;'),
};

/** Applies decorators (outermost first) to `Class.prototype[name]` the way TC39 does. */
function decorate(Class, name, ...decorators) {
  let fn = Class.prototype[name];
  for (const d of decorators.reverse()) {
    fn = d(fn, { kind: 'method', name, static: false, private: false, addInitializer() {} });
  }
  Class.prototype[name] = fn;
}

function composedPolicies() {
  return [
    new Retry({ maxAttempts: 3 }),
    new CircuitBreaker(),
    new Timeout(1_000),
    new Bulkhead(100),
  ];
}

const pairs = [
  {
    name: 'breaker, sync method (executeSync)',
    kind: 'sync',
    decorated() {
      class Service {
        work(x) {
          return x + 1;
        }
      }
      decorate(Service, 'work', circuitBreaker());
      const s = new Service();
      return (i) => s.work(i);
    },
    direct() {
      class Service {
        work(x) {
          return x + 1;
        }
      }
      const p = pipeline(new CircuitBreaker());
      const s = new Service();
      return (i) => p.executeSync(() => s.work(i));
    },
  },
  {
    name: 'breaker, async method (execute)',
    kind: 'async',
    decorated() {
      class Service {
        async work(x) {
          return x + 1;
        }
      }
      decorate(Service, 'work', circuitBreaker());
      const s = new Service();
      return (i) => s.work(i);
    },
    direct() {
      class Service {
        async work(x) {
          return x + 1;
        }
      }
      const p = pipeline(new CircuitBreaker());
      const s = new Service();
      return (i) => p.execute(() => s.work(i));
    },
  },
  {
    name: 'retry + breaker + timeout + bulkhead, async method',
    kind: 'async',
    decorated() {
      class Service {
        async work(x) {
          return x + 1;
        }
      }
      decorate(
        Service,
        'work',
        retry({ maxAttempts: 3 }),
        circuitBreaker(),
        timeout(1_000),
        bulkhead(100),
      );
      const s = new Service();
      return (i) => s.work(i);
    },
    direct() {
      class Service {
        async work(x) {
          return x + 1;
        }
      }
      const p = pipeline(...composedPolicies());
      const s = new Service();
      return (i) => p.execute(() => s.work(i));
    },
  },
];

/** Calls in one batch of about `ms`. */
async function calibrate(loop, op, ms) {
  let n = 64;
  for (;;) {
    const t = performance.now();
    await loop(op, n);
    const elapsed = performance.now() - t;
    if (elapsed >= ms / 4) return Math.max(1, Math.round((n * ms) / elapsed));
    n *= 4;
  }
}

/**
 * ns per call of one batch, in CPU time of this process rather than wall time: on a shared
 * machine, time spent descheduled would otherwise land on whichever side was running.
 */
async function batchNs(loop, op, n) {
  const start = process.cpuUsage();
  await loop(op, n);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1_000) / n;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function measurePair(pair) {
  const sides = ['decorated', 'direct'].map((side) => {
    const op = pair[side]();
    const loop = loops[pair.kind]();
    return { side, op, loop, samples: [] };
  });
  for (const s of sides) {
    const check = await s.loop(s.op, 1);
    if (check !== 1) throw new Error(`${pair.name} (${s.side}): expected 1, got ${check}`);
    const end = performance.now() + WARMUP_MS;
    while (performance.now() < end) await s.loop(s.op, 1_000);
    s.n = await calibrate(s.loop, s.op, BATCH_MS);
  }
  for (let b = 0; b < BATCHES; b++) {
    for (const s of b % 2 === 0 ? sides : [...sides].reverse()) {
      s.samples.push(await batchNs(s.loop, s.op, s.n));
    }
  }
  const [decorated, direct] = sides.map((s) => median(s.samples));
  return { pair: pair.name, decorated, direct, delta: decorated - direct };
}

const only = process.argv.indexOf('--pair');
if (only >= 0) {
  // Child: one pair, so no other row's calls shape the type feedback of shared code.
  const result = await measurePair(pairs[Number(process.argv[only + 1])]);
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

const results = [];
for (let i = 0; i < pairs.length; i++) {
  const args = [fileURLToPath(import.meta.url), '--pair', String(i)];
  if (quick) args.push('--quick');
  const { stdout } = await promisify(execFile)(process.execPath, args);
  results.push(JSON.parse(stdout));
}

const fmt = (x) => `${x.toFixed(1).padStart(7)} ns`;
console.log(
  `node ${process.version}, ${BATCHES} batches of ~${BATCH_MS} ms, median CPU time per call`,
);
console.log(
  `${'row'.padEnd(52)} ${'decorated'.padStart(10)} ${'direct'.padStart(10)} ${'delta'.padStart(10)}`,
);
for (const r of results) {
  const sign = r.delta >= 0 ? '+' : '';
  console.log(
    `${r.pair.padEnd(52)} ${fmt(r.decorated)} ${fmt(r.direct)} ${(sign + r.delta.toFixed(1)).padStart(7)} ns`,
  );
}
