/**
 * One route per framework behind a service guard, whose work is a function of the path: what
 * it resolves to is the body, what it rejects with is the handler's failure. `start()` sends
 * the status line, headers and a first chunk before the work fails (not in Hono, whose handler
 * returns a whole `Response`). Each framework's own error handler answers 418 where the
 * framework lets the user set one (Express, Hono); Fastify's and Node's answer 500.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { serve } from '@hono/node-server';
import express, { type NextFunction, type Request, type Response } from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { ServiceGuard } from '../../src/http/index.js';
import { type Framework, fastifyOnLoopback, onLoopback } from './guarded-servers.js';

export type Work = (path: string, start: () => void) => Promise<string>;

export interface FailingServer {
  readonly url: string;
  /** The errors Node's adapter passed to `onError`. */
  readonly reported: unknown[];
  close(): Promise<void>;
}

function startNode(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.write('partial');
}

/** Serves `work` with `framework` behind `guard` on 127.0.0.1, on a free port. */
export async function serveFailing(
  framework: Framework,
  guard: ServiceGuard,
  work: Work,
): Promise<FailingServer> {
  const reported: unknown[] = [];
  if (framework === 'fastify') {
    const app = Fastify();
    await app.register(guard.fastify);
    app.get('/*', async (req, reply) => {
      const body = await work(req.url, () => startNode(reply.raw));
      return reply.type('text/plain').send(body);
    });
    return { reported, ...(await fastifyOnLoopback(app)) };
  }
  let server: Server;
  if (framework === 'express') {
    const app = express();
    app.use(guard.connect);
    app.use(async (req: Request, res: Response) => {
      res.type('text/plain').send(await work(req.path, () => startNode(res)));
    });
    app.use(guard.errors);
    app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      res.status(418).send('own handler');
    });
    server = createServer(app);
  } else if (framework === 'node') {
    server = createServer(
      guard.node(
        async (req: IncomingMessage, res: ServerResponse) => {
          const body = await work(req.url ?? '/', () => startNode(res));
          res.setHeader('content-type', 'text/plain');
          res.end(body);
        },
        (error) => reported.push(error),
      ),
    );
  } else {
    const app = new Hono();
    app.use(guard.hono);
    app.get('*', async (c) =>
      c.text(
        await work(new URL(c.req.url).pathname, () => {
          throw new Error('a Hono handler returns its response whole');
        }),
      ),
    );
    app.onError((_error, c) => c.text('own handler', 418));
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise<void>((resolve) =>
      server.listening ? resolve() : server.once('listening', () => resolve()),
    );
  }
  return { reported, ...(await onLoopback(server)) };
}
