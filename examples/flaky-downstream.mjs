// @ts-check
/**
 * A flaky downstream to try the example services with by hand: it answers JSON, but one request
 * in three gets 503 with `Retry-After: 1`.
 *
 *   node examples/flaky-downstream.mjs 4001 & node examples/flaky-downstream.mjs 4002 &
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 4001);
let requests = 0;

createServer((req, res) => {
  requests++;
  if (requests % 3 === 1) {
    res.writeHead(503, { 'retry-after': '1' }).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ port, path: req.url, requests }));
}).listen(port, '127.0.0.1', () => console.log(`flaky downstream listening on ${port}`));
