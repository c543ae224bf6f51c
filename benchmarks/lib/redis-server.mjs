/**
 * A `redis-server` of the benchmark's own: from PATH, on a free loopback port, without
 * persistence (`--save '' --appendonly no`), in a temporary directory. It is stopped by
 * `stop()`, and killed when the process exits or is ended by a signal, so it never outlives
 * the measuring process.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HOST = '127.0.0.1';
const START_LIMIT_MS = 10_000;

/** `redis-server --version`, or undefined when it is not on PATH. */
export function redisServerVersion() {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) return undefined;
  return /v=(\S+)/.exec(r.stdout)?.[1] ?? r.stdout.trim();
}

/** Servers still running, and their directories. */
const running = new Map();
let hooked = false;

function killAll() {
  for (const [child, dir] of running) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  running.clear();
}

/** Kills the servers on exit, and on the signals that end a process without an exit event. */
function hookExit() {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      killAll();
      process.kill(process.pid, signal);
    });
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** True when something on `port` answers an inline PING with +PONG. */
function pings(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: HOST, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
    socket.once('error', () => done(false));
  });
}

function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function spawnOn(port, dir) {
  const log = join(dir, 'redis.log');
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      HOST,
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--logfile',
      log,
      '--daemonize',
      'no',
    ],
    { stdio: 'ignore' },
  );
  running.set(child, dir);
  child.once('exit', () => running.delete(child));
  let spawnError;
  child.once('error', (error) => {
    spawnError = error;
  });
  const deadline = Date.now() + START_LIMIT_MS;
  for (;;) {
    if (spawnError !== undefined) throw spawnError;
    if (child.exitCode !== null || child.signalCode !== null) {
      let tail = '';
      try {
        tail = readFileSync(log, 'utf8').trim().split('\n').slice(-3).join('\n');
      } catch {
        // No log written.
      }
      throw new Error(`redis-server on port ${port} exited during start: ${tail}`);
    }
    if (await pings(port)) return child;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer PING in ${START_LIMIT_MS} ms`);
    }
    await sleep(10);
  }
}

/**
 * Starts `redis-server` on a free loopback port and waits until it answers PING. Resolves to
 * `{ host, port, version, pause(), resume(), stop() }`: `pause` stops the process (SIGSTOP), so
 * that it accepts connections and answers nothing, until `resume` (SIGCONT) or `stop`.
 */
export async function startRedisServer() {
  hookExit();
  const dir = mkdtempSync(join(tmpdir(), 'breakwater-bench-redis-'));
  let child;
  let port = 0;
  // The port may be taken between the check and the server's bind: try a few.
  for (let attempt = 1; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await spawnOn(port, dir);
    } catch (error) {
      if (attempt === 5) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  return {
    host: HOST,
    port,
    version: redisServerVersion(),
    pause() {
      child.kill('SIGSTOP');
    },
    resume() {
      child.kill('SIGCONT');
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // A stopped process would hold the SIGTERM until it runs again.
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited(child);
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
