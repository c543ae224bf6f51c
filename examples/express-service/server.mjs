// @ts-check
/**
 * An Express 5 service that answers GET /products/:id from two flaky downstreams (inventory and
 * pricing), protected by breakwater:
 *
 * - each call downstream goes through the protected fetch: retries of failures with pushback and
 *   a retry budget, a breaker and an adaptive limit per origin, and the inbound deadline;
 * - each API key (`x-api-key`) gets RATE_LIMIT_PER_MINUTE requests, counted in Redis and shared
 *   by every instance of the service; the guard answers 429 with `Retry-After` and `RateLimit`;
 * - the guard sheds inbound load and refuses a request whose deadline (`x-timeout-ms`) has
 *   passed; a client that goes away aborts the calls made for it;
 * - /ops serves health, Prometheus metrics and a live dashboard.
 *
 * Run it (after `npm run build`, with redis-server running; the defaults are below):
 *   INVENTORY_URL=http://127.0.0.1:4001 PRICING_URL=http://127.0.0.1:4002 \
 *   node examples/express-service/server.mjs
 *   curl -i -H 'x-api-key: demo' -H 'x-timeout-ms: 2000' http://127.0.0.1:3000/products/1
 */

import { protectedFetch, serviceGuard } from 'breakwater/http';
import { createObservabilityHandler } from 'breakwater/observability';
import { RedisRateLimiter } from 'breakwater/redis';
import express from 'express';
import { Redis } from 'ioredis';

const {
  PORT = '3000',
  REDIS_URL = 'redis://127.0.0.1:6379',
  INVENTORY_URL = 'http://127.0.0.1:4001',
  PRICING_URL = 'http://127.0.0.1:4002',
  RATE_LIMIT_PER_MINUTE = '100',
} = process.env;

const redis = new Redis(REDIS_URL, {
  lazyConnect: true, // connected below, so the first decision finds the client ready
  enableOfflineQueue: false, // fail at once while Redis is away: the guard lets requests through
  maxRetriesPerRequest: 0,
  retryStrategy: (times) => Math.min(times * 50, 500), // back within 0.5 s of Redis
});
redis.on('error', (error) => console.warn(`redis: ${error.message}`));
await redis.connect();
const perApiKey = new RedisRateLimiter({
  client: redis,
  name: 'api-keys',
  limit: Number(RATE_LIMIT_PER_MINUTE),
  period: '1m',
});
const guard = serviceGuard({
  rateLimit: { limiter: perApiKey, key: (req) => req.header('x-api-key') ?? req.ip },
  concurrency: true, // an adaptive limit on the requests in progress
  shedding: true, // the least critical requests first while the event loop lags
});
// The standard preset; a downstream's failed answer rejects (HttpStatusError) rather than
// resolving as fetch would, so no handler reads an error page as data.
const downstream = protectedFetch({ failedResponse: 'reject' });
const ops = createObservabilityHandler();

const app = express();
// Before the guard: neither limited nor shed. Put your own authentication in front of it.
app.use('/ops', ops);
app.use(guard.connect);

app.get('/products/:id', async (req, res) => {
  const { id } = req.params;
  const [stock, price] = await Promise.all([
    downstream(`${INVENTORY_URL}/stock/${id}`).then((r) => r.json()),
    downstream(`${PRICING_URL}/prices/${id}`).then((r) => r.json()),
  ]);
  res.json({ id, stock, price });
});
// After the routes: a deadline that passed answers 504, an open breaker 503, a failed downstream 502.
app.use(guard.errors);

const server = app.listen(Number(PORT), '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on ${typeof address === 'object' ? address?.port : address}`);
});

process.once('SIGTERM', () => {
  ops.close(); // ends the dashboards' streams, which would hold the server open
  server.close(() => {
    guard.dispose();
    redis.quit();
  });
});
