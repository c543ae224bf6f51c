/**
 * A loopback HTTP server whose every answer a test scripts: a status, headers and body after a
 * delay, or no answer at all (the request hangs until the client goes away). It records each
 * request (method, path, headers, body) and counts the sockets open at it, so a test can check
 * that a client left no connection behind.
 *
 * @example
 * ```ts
 * const server = await startScriptedServer(() => ({ status: 503 }));
 * await fetch(server.url);
 * server.requests.length; // 1
 * await server.close();
 * ```
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedAnswer {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  /** The body; a number sends that many bytes, slowly (one chunk every 10 ms). */
  readonly body?: string | number;
  /** ms before the headers are sent. */
  readonly delayMs?: number;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** `performance.now()` when it arrived. */
  readonly at: number;
  /** Set when the client went away before the answer ended. */
  aborted: boolean;
}

/** What the script answers a request with: an answer, or `'hang'` for none. */
export type Script = (request: RecordedRequest, index: number) => ScriptedAnswer | 'hang';

export interface ScriptedServer {
  readonly url: string;
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Sockets open at the server now. */
  openSockets(): number;
  /** Changes the script for the requests to come. */
  setScript(script: Script): void;
  close(): Promise<void>;
}

export async function startScriptedServer(script: Script): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let current = script;
  const later = (fn: () => void, ms: number) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const server = createServer({ keepAliveTimeout: 60_000 }, (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        at: performance.now(),
        aborted: false,
      };
      requests.push(recorded);
      res.on('close', () => {
        if (!res.writableFinished) recorded.aborted = true;
      });
      const answer = current(recorded, requests.length - 1);
      if (answer === 'hang') return;
      const send = () => {
        if (res.destroyed) return;
        const { body = '' } = answer;
        res.writeHead(answer.status ?? 200, answer.headers);
        if (typeof body === 'string') {
          res.end(body);
          return;
        }
        let left = body;
        const drip = () => {
          if (res.destroyed) return;
          if (left-- <= 0) res.end();
          else {
            res.write('x');
            later(drip, 10);
          }
        };
        drip();
      };
      if (answer.delayMs) later(send, answer.delayMs);
      else send();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/`,
    origin,
    requests,
    openSockets: () => sockets.size,
    setScript: (s) => {
      current = s;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
