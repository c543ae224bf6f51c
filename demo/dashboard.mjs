// @ts-check
/**
 * The demo's live dashboard: the protected run's policies in a registry, served by
 * `breakwater/observability` on a loopback port.
 */
import { createServer } from 'node:http';
import { Registry } from 'breakwater';
import { createObservabilityHandler } from 'breakwater/observability';

/**
 * @typedef {object} Dashboard
 * @property {string} url The page's address.
 * @property {() => Promise<void>} close Ends the page's live streams and stops the server.
 */

/**
 * Serves `/dashboard`, `/health` and `/metrics` of the given policies on 127.0.0.1.
 * @param {object} options
 * @param {Record<'retry' | 'breaker' | 'timeout' | 'bulkhead', object>} options.policies
 * @param {number} options.port 0: a free port.
 * @returns {Promise<Dashboard>}
 */
export async function serveDashboard({ policies, port }) {
  const registry = new Registry();
  for (const policy of Object.values(policies)) registry.register('dependency', policy);
  const handler = createObservabilityHandler(registry, {
    critical: ['dependency'],
    interval: 500,
    title: 'breakwater demo',
  });
  const server = createServer((req, res) =>
    handler(req, res, () => {
      // The bare address leads to the page.
      if (req.url === '/') res.writeHead(302, { Location: '/dashboard' }).end();
      else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found\n');
    }),
  );
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(undefined));
  });
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}/dashboard`,
    close: () => {
      handler.close();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Resolves on the first Ctrl-C (SIGINT) or SIGTERM.
 * @returns {Promise<void>}
 */
export function untilStopped() {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
