/**
 * Helpers of the HTTP tests: a real `node:http` server on a loopback port, and a small
 * Server-Sent Events reader over fetch.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from '../../src/index.js';
import type { Registry } from '../../src/registry/Registry.js';

/** A started server and its base URL (`http://127.0.0.1:<port>`). */
export interface Served {
  readonly server: Server;
  readonly url: string;
  close(): Promise<void>;
}

/** Starts `listener` on 127.0.0.1, on a free port. */
export async function serve(listener: RequestListener): Promise<Served> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** One Server-Sent Event. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** An open `/events` stream. */
export interface Stream {
  readonly response: Response;
  /** The next event of type `type` (others are skipped); rejects after `timeoutMs`. */
  next(type?: string, timeoutMs?: number): Promise<SseEvent>;
  /** Every event received so far, in order. */
  readonly received: readonly SseEvent[];
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  /** Drops the connection from the client's side. */
  close(): void;
}

/** Opens an SSE stream and parses its events as they arrive. */
export async function openStream(
  url: string,
  headers?: Readonly<Record<string, string>>,
): Promise<Stream> {
  const abort = new AbortController();
  const response = await fetch(url, { signal: abort.signal, headers });
  if (response.body === null) throw new Error(`No body from ${url} (${response.status})`);
  const received: SseEvent[] = [];
  let read = 0;
  let wake: (() => void) | undefined;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const ended = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = parseBlock(block);
          if (event !== undefined) received.push(event);
          end = buffer.indexOf('\n\n');
        }
        wake?.();
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    } finally {
      wake?.();
    }
  })();
  let finished = false;
  void ended.finally(() => {
    finished = true;
  });

  async function next(type = 'snapshot', timeoutMs = 5000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (read < received.length) {
        const event = received[read++]!;
        if (event.event === type) return event;
      }
      if (finished) throw new Error(`The stream ended before a "${type}" event`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`No "${type}" event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  return { response, next, received, ended, close: () => abort.abort() };
}

function parseBlock(block: string): SseEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  return data.length === 0 ? undefined : { event, data: data.join('\n') };
}

/** Polls `check` every 10 ms until it holds; throws after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Runs `count` failing calls through the breaker `name` (keyed under `key` if given). */
export function fail(registry: Registry, name: string, count: number, key?: string): Promise<void> {
  return run(registry, name, count, key, () => Promise.reject(new Error('down')));
}

/** Runs `count` successful calls through the breaker `name` (keyed under `key` if given). */
export function succeed(
  registry: Registry,
  name: string,
  count: number,
  key?: string,
): Promise<void> {
  return run(registry, name, count, key, () => Promise.resolve('ok'));
}

async function run(
  registry: Registry,
  name: string,
  count: number,
  key: string | undefined,
  call: () => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    const breaker =
      key === undefined ? registry.circuitBreaker(name) : registry.keyedCircuitBreaker(name, key);
    await pipeline(breaker).tryExecute(call);
  }
}

/** The dashboard's first `snapshot` frame from `url` (its events stream), parsed; the stream is closed. */
export async function firstSnapshot(url: string): Promise<{
  kinds: Record<string, string>;
  instances: { name: string; row?: { detail: string } }[];
}> {
  const stream = await openStream(url);
  try {
    return JSON.parse((await stream.next('snapshot')).data);
  } finally {
    stream.close();
  }
}
