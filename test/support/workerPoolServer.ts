/**
 * A loopback dependency with a fixed pool of workers behind an unbounded FIFO queue, whose
 * pool a test resizes while it runs (capacity that drops, then comes back). Work once queued
 * is done even when its client has gone (as most servers do: they notice only when they
 * write), so under overload its queue grows without bound.
 *
 * @example
 * ```ts
 * const server = await startWorkerPoolServer({ workers: 8, serviceMs: 20 });
 * server.setWorkers(2); // a quarter of the capacity from now on
 * await server.close();
 * ```
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface WorkerPoolServer {
  readonly url: string;
  /** Requests that reached it, and those answered 200. */
  readonly counts: { received: number; served: number };
  /**
   * When each service began and ended (`performance.now()`): a service lasts longer than
   * `serviceMs` by however late its timer fired, so these say what the machine let it do.
   */
  readonly services: { readonly start: number; readonly end: number }[];
  setWorkers(workers: number): void;
  close(): Promise<void>;
}

export async function startWorkerPoolServer(options: {
  readonly workers: number;
  readonly serviceMs: number;
}): Promise<WorkerPoolServer> {
  let workers = options.workers;
  let busy = 0;
  const queue: ServerResponse[] = [];
  const counts = { received: 0, served: 0 };
  const services: { start: number; end: number }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const next = () => {
    while (busy < workers && queue.length > 0) {
      const res = queue.shift()!;
      busy++;
      const start = performance.now();
      const t = setTimeout(() => {
        timers.delete(t);
        services.push({ start, end: performance.now() });
        busy--;
        if (!res.destroyed) {
          counts.served++;
          res.writeHead(200, { 'content-length': '2' }).end('ok');
        }
        next();
      }, options.serviceMs);
      timers.add(t);
    }
  };
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    counts.received++;
    req.resume();
    queue.push(res);
    next();
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    counts,
    services,
    setWorkers: (n) => {
      workers = n;
      next();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
