/**
 * Real Redis servers for tests: `redis-server` from PATH, one per test file, on a free
 * loopback port, without persistence or a config file, in its own temporary directory.
 *
 * `describeRedis(name, (redis) => { ... })` starts the server before the block's tests and
 * stops it after them; `redis()` returns it. Without `redis-server` on PATH the block is
 * skipped with one console line, unless the CI variable is set: then it fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { sleep } from './async.js';

/** A reply of the RESP2 protocol: a string, an integer, null, an array, or an error reply. */
export type RespReply = string | number | null | RespError | RespReply[];

/** An error reply (`-ERR ...`), returned rather than thrown. */
export class RespError extends Error {}

export interface RedisServer {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Whether the process is running. */
  readonly running: boolean;
  /** Sends one command on a fresh connection and returns the reply. */
  command(...args: (string | number)[]): Promise<RespReply>;
  /** SIGTERM, waits for the exit and removes the temporary directory. */
  stop(): Promise<void>;
  /** SIGKILL, waits for the exit; `restart()` starts it again. */
  kill(): Promise<void>;
  /** Starts a new, empty server on the same port (stopping the running one first). */
  restart(): Promise<void>;
  /**
   * Stops the process (SIGSTOP): a hung server. Connections stay open and commands queue in
   * the kernel; `resume()` (SIGCONT) runs them. Stopping or killing the server resumes it.
   */
  pause(): void;
  /** Lets a paused process run again (SIGCONT); does nothing when it is not paused. */
  resume(): void;
}

const HOST = '127.0.0.1';
const START_LIMIT_MS = 10_000;

/** Path of `redis-server` on PATH, or undefined. */
export function findRedisServer(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, 'redis-server');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

export function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  // A server must not outlive the test process that started it.
  for (const child of running) child.kill('SIGKILL');
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Encodes a command as a RESP array of bulk strings. */
function encode(args: readonly (string | number)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.from(String(arg), 'utf8');
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** Parses one reply from `buf` at `pos`; undefined when `buf` does not hold all of it yet. */
function parse(buf: Buffer, pos: number): { value: RespReply; end: number } | undefined {
  const lineEnd = buf.indexOf('\r\n', pos);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buf[pos]!);
  const line = buf.toString('utf8', pos + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new RespError(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buf.length < next + length + 2) return undefined;
      return { value: buf.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespReply[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const item = parse(buf, at);
        if (item === undefined) return undefined;
        items.push(item.value);
        at = item.end;
      }
      return { value: items, end: at };
    }
    default:
      throw new Error(`Unexpected RESP reply type ${JSON.stringify(type)}`);
  }
}

/** Sends one command to `port` on a new connection; rejects on connection errors. */
export function sendCommand(port: number, args: readonly (string | number)[]): Promise<RespReply> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: HOST, port });
    let buf = Buffer.alloc(0);
    let done = false;
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no reply to ${args[0]} in 5 s`)));
    socket.once('connect', () => socket.write(encode(args)));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      const reply = parse(buf, 0);
      if (reply === undefined) return;
      done = true;
      socket.destroy();
      resolve(reply.value);
    });
    socket.once('error', (error) => {
      if (!done) reject(error);
    });
    socket.once('close', () => {
      if (!done) reject(new Error(`connection closed before the reply to ${args[0]}`));
    });
  });
}

async function waitForPing(port: number, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + START_LIMIT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      let tail = '';
      try {
        tail = readFileSync(log, 'utf8').split('\n').slice(-5).join('\n');
      } catch {
        // No log written.
      }
      throw new Error(`redis-server on port ${port} exited during start:\n${tail}`);
    }
    try {
      if ((await sendCommand(port, ['PING'])) === 'PONG') return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `redis-server on port ${port} did not answer PING within ${START_LIMIT_MS} ms`,
      );
    }
    await sleep(10);
  }
}

/**
 * Starts `bin` on `port` (loopback, persistence off, files in `dir`, `extra` arguments after the
 * rest) and waits until it answers PING. The server is killed if the test process exits.
 */
export async function spawnRedis(
  bin: string,
  port: number,
  dir: string,
  extra: readonly string[] = [],
): Promise<ChildProcess> {
  const log = join(dir, `redis-${Date.now()}.log`);
  const child = spawn(
    bin,
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
      ...extra,
    ],
    { stdio: 'ignore' },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  const failed = new Promise<never>((_, reject) => child.once('error', reject));
  failed.catch(() => {});
  await Promise.race([waitForPing(port, child, log), failed]);
  return child;
}

/** Starts `redis-server` (from PATH) on a free loopback port and waits until it answers PING. */
export async function startRedisServer(): Promise<RedisServer> {
  const bin = findRedisServer();
  if (bin === undefined) throw new Error(missingMessage());
  const dir = mkdtempSync(join(tmpdir(), 'breakwater-redis-'));
  let port = 0;
  let child: ChildProcess | undefined;
  // The free port may be taken between the check and the server's bind: try a few.
  for (let attempt = 1; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await spawnRedis(bin, port, dir);
    } catch (error) {
      if (attempt === 5) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  let current: ChildProcess | undefined = child;
  let paused = false;

  function resume(): void {
    if (!paused) return;
    paused = false;
    current?.kill('SIGCONT');
  }

  async function terminate(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    resume();
    const c = current;
    current = undefined;
    if (c === undefined) return;
    c.kill(signal);
    const timer = setTimeout(() => c.kill('SIGKILL'), 5_000);
    await exited(c);
    clearTimeout(timer);
  }

  return {
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    get running() {
      return current !== undefined && current.exitCode === null && current.signalCode === null;
    },
    command: (...args) => sendCommand(port, args),
    async stop() {
      await terminate('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
    kill: () => terminate('SIGKILL'),
    pause() {
      if (current === undefined || paused) return;
      paused = true;
      current.kill('SIGSTOP');
    },
    resume,
    async restart() {
      await terminate('SIGTERM');
      mkdirSync(dir, { recursive: true });
      current = await spawnRedis(bin, port, dir);
    },
  };
}

export function missingMessage(): string {
  return (
    'redis-server is not on PATH: install it to run the Redis tests ' +
    '(Debian/Ubuntu: apt install redis-server; macOS: brew install redis)'
  );
}

/**
 * Says once per Vitest run (not once per test file) that the Redis tests are skipped: test
 * files run in child processes of one Vitest process, and the first to create the marker
 * named after it prints the line.
 */
function announceSkip(): void {
  try {
    writeFileSync(join(tmpdir(), `breakwater-redis-skipped-${process.ppid}`), '', { flag: 'wx' });
  } catch {
    return;
  }
  console.warn(`\n!!! SKIPPED Redis tests: ${missingMessage()} !!!\n`);
}

/**
 * A describe block whose tests get a real Redis server, started before them and stopped after
 * them. Without redis-server on PATH: skipped with one loud console line, or failed when the
 * CI variable is set.
 */
export function describeRedis(name: string, body: (redis: () => RedisServer) => void): void {
  describeWithRedis(name, 'describeRedis', startRedisServer, body);
}

/**
 * A describe block whose tests get what `start` makes from redis-server (a server, a cluster),
 * made before them and stopped after them. Without redis-server on PATH the block is skipped
 * with one loud console line, or fails when the CI variable is set: the Redis tests are
 * mandatory there.
 */
export function describeWithRedis<T extends { stop(): Promise<void> }>(
  name: string,
  helper: string,
  start: () => Promise<T>,
  body: (made: () => T) => void,
  startTimeout?: number,
): void {
  const unavailable = (): never => {
    throw new Error(`Not started (used outside a test of ${helper}?)`);
  };
  if (findRedisServer() === undefined) {
    if (inCi()) {
      describe(name, () => {
        it('needs redis-server on PATH (CI is set, so this fails instead of skipping)', () => {
          throw new Error(missingMessage());
        });
      });
      return;
    }
    announceSkip();
    // The one skip the project allows: no redis-server on a developer's machine (said aloud).
    describe.skip(name, () => body(unavailable));
    return;
  }
  describe(name, () => {
    let made: T | undefined;
    beforeAll(async () => {
      made = await start();
    }, startTimeout);
    afterAll(async () => {
      await made?.stop();
    });
    body(() => made ?? unavailable());
  });
}
