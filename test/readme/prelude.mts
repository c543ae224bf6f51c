/**
 * What the README's examples take as given (a service URL, a request body, an Express app, ...),
 * real enough to run against: `base` and `url` point at an HTTP server on loopback that answers
 * every request with JSON. A block is given the names it uses and does not declare itself.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { circuitBreaker, Registry } from 'breakwater';
import express, { type RequestHandler } from 'express';

const server = createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.setHeader('connection', 'close');
  res.end(JSON.stringify({ id: 'r-1', path: req.url, method: req.method }));
});
server.listen(0, '127.0.0.1');
server.unref();
await once(server, 'listening');

/** The base URL of a service. */
export const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
export const url = `${base}/search?q=breakwater`;
export const body = JSON.stringify({ amount: 1_000, currency: 'EUR' });
/** A caller's signal that never aborts. */
export const signal: AbortSignal = new AbortController().signal;
export const cache = new Map<string, unknown>([['last-search', []]]);
export const key = 'last-search';
export const breaker = circuitBreaker({ name: 'search' });
export const sharedBreaker = circuitBreaker({ name: 'shared' });
export const registry = new Registry();
export const app = express();
export const requireOperator: RequestHandler = (_req, _res, next) => next();
export const userId = 'user-42';
export const log = {
  warn: (..._args: unknown[]): void => {},
  info: (..._args: unknown[]): void => {},
};
export const ledger = { balance: (_account: string): number => 120 };

export interface Receipt {
  readonly id: string;
}
export interface Entry {
  readonly id: string;
}

/**
 * A statement of a block written `expression; // value` (a literal: true, false, a number or a
 * quoted string, perhaps followed by `: explanation`) is checked to give that value.
 */
export const readmeShows = (actual: unknown, shown: unknown, line: number): void => {
  if (!Object.is(actual, shown)) {
    throw new Error(
      `README block line ${line}: shows ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`,
    );
  }
};
