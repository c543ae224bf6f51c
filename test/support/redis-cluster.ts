/**
 * A real Redis Cluster for tests: three `redis-server` masters (no replicas) in cluster mode on
 * free loopback ports, each in its own temporary directory, joined by
 * `redis-cli --cluster create`.
 *
 * `describeRedisCluster(name, (cluster) => { ... })` starts the cluster before the block's
 * tests and stops it after them. Without `redis-server` on PATH the block is skipped with one
 * console line, unless the CI variable is set: then it fails.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sleep } from './async.js';
import {
  describeWithRedis,
  exited,
  findRedisServer,
  missingMessage,
  RespError,
  type RespReply,
  sendCommand,
  spawnRedis,
} from './redis-server.js';

const HOST = '127.0.0.1';
const NODES = 3;
const START_LIMIT_MS = 10_000;
const CLUSTER_LIMIT_MS = 20_000;

export interface ClusterNode {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Sends one command to this node on a fresh connection and returns the reply. */
  command(...args: (string | number)[]): Promise<RespReply>;
}

export interface RedisCluster {
  /** The masters, in the order they were given to `redis-cli --cluster create`. */
  readonly nodes: readonly ClusterNode[];
  /** The hash slot of `key` (CLUSTER KEYSLOT). */
  keySlot(key: string): Promise<number>;
  /** The master serving `slot`, by CLUSTER SLOTS. */
  nodeForSlot(slot: number): Promise<ClusterNode>;
  /** The master serving `key`. */
  nodeForKey(key: string): Promise<ClusterNode>;
  /** SIGTERM to every node, waits for the exits and removes the temporary directories. */
  stop(): Promise<void>;
}

/** Free loopback ports, all different, held open together so none is handed out twice. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, HOST, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address !== 'object') throw new Error('no port');
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** Path of `redis-cli`: next to `redis-server`, else from PATH. */
function findRedisCli(server: string): string {
  const beside = join(dirname(server), 'redis-cli');
  try {
    accessSync(beside, constants.X_OK);
    return beside;
  } catch {
    return 'redis-cli';
  }
}

interface Started {
  readonly child: ChildProcess;
  readonly dir: string;
  readonly port: number;
}

async function startNode(bin: string, port: number, busPort: number): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'breakwater-redis-cluster-'));
  try {
    const child = await spawnRedis(bin, port, dir, [
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      // An explicit bus port: the default (port + 10000) overflows above port 55535.
      '--cluster-port',
      String(busPort),
    ]);
    return { child, dir, port };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

function run(file: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: CLUSTER_LIMIT_MS }, (error, stdout, stderr) => {
      if (error)
        reject(new Error(`${file} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

async function waitForClusterOk(ports: readonly number[]): Promise<void> {
  const deadline = Date.now() + CLUSTER_LIMIT_MS;
  for (;;) {
    const infos = await Promise.all(
      ports.map((port) => sendCommand(port, ['CLUSTER', 'INFO']).catch((e: Error) => e.message)),
    );
    if (infos.every((info) => typeof info === 'string' && info.includes('cluster_state:ok'))) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`cluster_state is not ok on every node:\n${infos.map(String).join('\n')}`);
    }
    await sleep(50);
  }
}

async function stopNodes(started: readonly Started[]): Promise<void> {
  await Promise.all(
    started.map(async ({ child, dir }) => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited(child);
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    }),
  );
}

/** Starts three cluster-mode masters, creates the cluster and waits for `cluster_state:ok`. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const bin = findRedisServer();
  if (bin === undefined) throw new Error(missingMessage());
  const cli = findRedisCli(bin);
  const started: Started[] = [];
  try {
    // Free ports may be taken between the check and the bind: try a few times per node.
    for (let i = 0; i < NODES; i++) {
      for (let attempt = 1; ; attempt++) {
        const [port, busPort] = await freePorts(2);
        try {
          started.push(await startNode(bin, port!, busPort!));
          break;
        } catch (error) {
          if (attempt === 5) throw error;
        }
      }
    }
    const ports = started.map((s) => s.port);
    await run(cli, [
      '--cluster',
      'create',
      ...ports.map((port) => `${HOST}:${port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    await waitForClusterOk(ports);
  } catch (error) {
    await stopNodes(started);
    throw error;
  }

  const nodes: ClusterNode[] = started.map(({ port }) => ({
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    command: (...args) => sendCommand(port, args),
  }));
  const first = nodes[0]!;

  async function keySlot(key: string): Promise<number> {
    const reply = await first.command('CLUSTER', 'KEYSLOT', key);
    if (typeof reply !== 'number') throw new Error(`CLUSTER KEYSLOT replied ${String(reply)}`);
    return reply;
  }

  async function nodeForSlot(slot: number): Promise<ClusterNode> {
    const reply = await first.command('CLUSTER', 'SLOTS');
    if (!Array.isArray(reply)) throw new Error(`CLUSTER SLOTS replied ${String(reply)}`);
    for (const range of reply) {
      if (!Array.isArray(range) || range instanceof RespError) continue;
      const [start, end, master] = range as [number, number, RespReply[]];
      if (slot >= start && slot <= end) {
        const port = master[1];
        const node = nodes.find((n) => n.port === port);
        if (node !== undefined) return node;
      }
    }
    throw new Error(`no node serves slot ${slot}`);
  }

  return {
    nodes,
    keySlot,
    nodeForSlot,
    nodeForKey: async (key) => nodeForSlot(await keySlot(key)),
    stop: () => stopNodes(started.splice(0)),
  };
}

/**
 * A describe block whose tests get a real three-master Redis Cluster, started before them and
 * stopped after them. Without redis-server on PATH: skipped with a loud console line, or
 * failed when the CI variable is set.
 */
export function describeRedisCluster(
  name: string,
  body: (cluster: () => RedisCluster) => void,
): void {
  describeWithRedis(
    name,
    'describeRedisCluster',
    startRedisCluster,
    body,
    CLUSTER_LIMIT_MS + 3 * START_LIMIT_MS,
  );
}
