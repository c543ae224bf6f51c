/**
 * The core the measuring processes run on. The cores of a virtual machine need not be alike:
 * on a 2-core VM an await loop ran at 51 ns per call on one core and at 82 ns on the other,
 * every time, while a plain arithmetic loop ran alike on both. A process landed on either core
 * by chance, so the same row moved by tens of nanoseconds from one process to the next. Every
 * measuring process is therefore pinned (with `taskset`, on Linux) to one core, by default the
 * one where a short await loop runs fastest. All libraries of a scenario share its process, so
 * the choice favours none of them.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const calibrationScript = fileURLToPath(new URL('./calibrate.mjs', import.meta.url));

function hasTaskset() {
  if (process.platform !== 'linux') return false;
  const r = spawnSync('taskset', ['--version'], { encoding: 'utf8' });
  return r.status === 0;
}

/** The cores this process may run on, from `taskset -cp` ("0-3,6"), or [] when unknown. */
function allowedCpus() {
  const r = spawnSync('taskset', ['-cp', String(process.pid)], { encoding: 'utf8' });
  const list = r.status === 0 ? r.stdout.split(':').pop()?.trim() : undefined;
  if (!list) return [];
  const out = [];
  for (const part of list.split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b ?? a); c++) out.push(c);
  }
  return out;
}

function calibrate(cpu) {
  const r = spawnSync('taskset', ['-c', String(cpu), process.execPath, calibrationScript], {
    encoding: 'utf8',
  });
  const ns = Number(r.stdout.trim());
  return r.status === 0 && Number.isFinite(ns) ? ns : Number.POSITIVE_INFINITY;
}

/**
 * Picks the core: `choice` is 'none' (no pinning), 'auto' (the fastest on the calibration
 * loop, each core tried twice) or a core number. Returns `{ cpu, calibration, reason }`;
 * `cpu` is null when processes are not pinned, with the reason.
 */
export function chooseCpu(choice) {
  if (choice === 'none')
    return { cpu: null, calibration: [], reason: 'pinning turned off (--cpu none)' };
  if (!hasTaskset()) return { cpu: null, calibration: [], reason: 'taskset is not available here' };
  const cpus = allowedCpus();
  if (choice !== 'auto') {
    const cpu = Number(choice);
    if (!cpus.includes(cpu)) {
      throw new Error(`--cpu ${choice}: this process may run on cores ${cpus.join(', ')}`);
    }
    return { cpu, calibration: [], reason: 'chosen with --cpu' };
  }
  if (cpus.length < 2) return { cpu: null, calibration: [], reason: 'one core only' };
  const calibration = cpus.map((cpu) => ({
    cpu,
    nsPerAwait: Math.round(Math.min(calibrate(cpu), calibrate(cpu)) * 10) / 10,
  }));
  const best = calibration.reduce((a, b) => (b.nsPerAwait < a.nsPerAwait ? b : a));
  if (!Number.isFinite(best.nsPerAwait)) {
    return { cpu: null, calibration: [], reason: 'the calibration loop failed under taskset' };
  }
  return { cpu: best.cpu, calibration, reason: 'the fastest core on an await loop' };
}

/** The command and arguments that run `node args` on `cpu` (unpinned when `cpu` is null). */
export function pinned(cpu, args) {
  return cpu === null
    ? [process.execPath, args]
    : ['taskset', ['-c', String(cpu), process.execPath, ...args]];
}
