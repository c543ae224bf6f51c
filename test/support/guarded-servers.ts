/**
 * The same two routes served on loopback by each framework the service guard supports, behind
 * a guard: `/work` answers the request context it ran in, `/hang` never answers and records
 * when its context's signal aborts. Counts the handler's runs.
 */
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import { requestContext, requestTimeLeft, type ServiceGuard } from '../../src/http/index.js';

export const FRAMEWORKS = ['express', 'fastify', 'hono', 'node'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** What the routes saw. */
export class Probe {
  runs = 0;
  /** Resolves when a `/hang` request's handler has started. */
  started = deferred();
  /** Resolves when a `/hang` request's signal has aborted. */
  aborted = deferred();

  /** The body of `/work`: the context the handler runs in. */
  work(): string {
    this.runs++;
    const context = requestContext();
    return JSON.stringify({
      timeLeft: Number.isFinite(requestTimeLeft()) ? requestTimeLeft() : null,
      criticality: context?.criticality ?? null,
      hasSignal: context?.signal instanceof AbortSignal,
    });
  }

  /** The start of `/hang`: waits for the client to go away. */
  hang(): void {
    this.runs++;
    const signal = requestContext()?.signal;
    signal?.addEventListener('abort', () => this.aborted.resolve());
    this.started.resolve();
  }
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return Object.assign(promise, { resolve });
}

export interface GuardedServer {
  readonly url: string;
  readonly probe: Probe;
  close(): Promise<void>;
}

/** Serves the routes with `framework` behind `guard` on 127.0.0.1, on a free port. */
export async function serveGuarded(
  framework: Framework,
  guard: ServiceGuard,
): Promise<GuardedServer> {
  const probe = new Probe();
  if (framework === 'fastify') {
    const app = Fastify();
    await app.register(guard.fastify);
    app.get('/work', async (_req, reply) => reply.type('application/json').send(probe.work()));
    app.get('/hang', (_req, _reply) => {
      probe.hang();
    });
    return { probe, ...(await fastifyOnLoopback(app)) };
  }
  let server: Server;
  if (framework === 'express') {
    const app = express();
    app.use(guard.connect);
    app.get('/work', (_req, res) => {
      res.type('application/json').send(probe.work());
    });
    app.get('/hang', () => probe.hang());
    server = createServer(app);
  } else if (framework === 'node') {
    server = createServer(
      guard.node((req: IncomingMessage, res) => {
        if (req.url === '/hang') return probe.hang();
        res.setHeader('content-type', 'application/json');
        res.end(probe.work());
      }),
    );
  } else {
    const app = new Hono();
    app.use(guard.hono);
    app.get('/work', (c) => c.body(probe.work(), 200, { 'content-type': 'application/json' }));
    app.get('/hang', () => {
      probe.hang();
      return new Promise<Response>(() => {});
    });
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise<void>((resolve) =>
      server.listening ? resolve() : server.once('listening', () => resolve()),
    );
  }
  return { probe, ...(await onLoopback(server)) };
}

/** `server` listening on 127.0.0.1 (on a free port unless it listens already), and its closer. */
export async function onLoopback(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  if (!server.listening) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A Fastify app listening on 127.0.0.1 on a free port, and its closer. */
export async function fastifyOnLoopback(
  app: FastifyInstance,
): Promise<{ url: string; close(): Promise<void> }> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
  };
}

/** Opens `/hang` and returns a function that drops the connection. */
export function openHanging(url: string, headers: Record<string, string> = {}): () => void {
  const req = request(`${url}/hang`, { headers, agent: false });
  req.on('error', () => {});
  req.end();
  return () => req.destroy();
}
