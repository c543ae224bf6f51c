/**
 * Instances of a shared breaker in processes of their own (test/redis/fixtures/shared-breaker.mjs,
 * on the BUILT package): started, asked, and ended after each test.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll } from 'vitest';
import { startTalkingChild, type TalkingChild } from './child.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('../redis/fixtures/shared-breaker.mjs', import.meta.url));

export type Message = Record<string, unknown>;

/** What a process of the fixture takes besides the signals' options. */
export interface FixtureOptions {
  readonly quorum?: number;
  readonly breakDuration?: number;
  readonly pollInterval?: number;
  readonly probeLease?: number;
  readonly timeout?: number;
  /** NODE_APP_INSTANCE of the process, as PM2 sets it. */
  readonly slot?: number;
  /** The runtime offers no `node:os` (nor any built-in module). */
  readonly noOs?: boolean;
}

/** How long a process may take to start and say it is ready: a liveness bound, not a timing. */
export const READY_LIMIT_MS = 120_000;

export const isReady = (m: Message): boolean => m.type === 'ready';
export const opened = (m: Message): boolean => m.type === 'transition' && m.to === 'open';

/**
 * Checks the package is built before the calling file's tests, and ends every process started
 * by the returned function after each test.
 */
export function sharedBreakerProcesses(): (
  port: number,
  name: string,
  instance: string,
  client: 'ioredis' | 'node-redis',
  options: FixtureOptions,
  skewMs?: number,
) => TalkingChild {
  let started: TalkingChild[] = [];
  beforeAll(() => {
    if (!existsSync(`${root}dist/redis/index.js`)) {
      throw new Error('The package is not built (missing dist/redis/index.js): run npm run build');
    }
  });
  afterEach(async () => {
    await Promise.all(started.map((c) => c.end()));
    started = [];
  });
  return (port, name, instance, client, options, skewMs = 0) => {
    const child = startTalkingChild(
      fixture,
      [port, name, instance, client, skewMs, JSON.stringify(options)],
      root,
      600_000,
    );
    started.push(child);
    return child;
  };
}

/** Sends `cmd` and resolves with the first message of `type` written after it. */
export function ask(
  child: TalkingChild,
  cmd: string,
  type: string,
  limitMs = 60_000,
): Promise<Message> {
  const seen = child.messages.length;
  child.send({ cmd });
  return child.next((m) => m.type === type && child.messages.indexOf(m) >= seen, limitMs);
}
