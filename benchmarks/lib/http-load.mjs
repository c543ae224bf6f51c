/**
 * The load generator of the http-server scenario, run in a process of its own so that it does
 * not share the measured server's event loop (see http.mjs), driven over IPC. A message
 * `{ id, url, connections, durationMs }` runs autocannon's programmatic API for that long
 * (autocannon counts whole seconds); `{ id, url, connections, amount }` sends exactly `amount`
 * GETs, `connections` at a time on kept-alive node:http connections, and answers as soon as the
 * last is read (autocannon would wait for its next one-second tick). Both are answered with
 * `{ id, requests, elapsedMs, p50Ms, p99Ms, errors, timeouts, non2xx }`. It exits when the
 * parent goes.
 */
import { Agent, get } from 'node:http';
import autocannon from 'autocannon';

async function timed(url, connections, durationMs) {
  const r = await autocannon({ url, connections, pipelining: 1, duration: durationMs / 1_000 });
  return {
    requests: r.requests.total,
    elapsedMs: new Date(r.finish).getTime() - new Date(r.start).getTime(),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
  };
}

const agents = new Map();

/** One GET on `agent`, its body read: resolves with the status. */
const request = (url, agent) =>
  new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode));
      res.once('error', reject);
    }).once('error', reject);
  });

async function counted(url, connections, amount) {
  let agent = agents.get(connections);
  if (agent === undefined) {
    agent = new Agent({ keepAlive: true, maxSockets: connections });
    agents.set(connections, agent);
  }
  let sent = 0;
  let non2xx = 0;
  let errors = 0;
  const t0 = performance.now();
  const client = async () => {
    while (sent < amount) {
      sent++;
      try {
        const status = await request(url, agent);
        if (status < 200 || status > 299) non2xx++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  const elapsedMs = performance.now() - t0;
  return { requests: amount, elapsedMs, p50Ms: 0, p99Ms: 0, errors, timeouts: 0, non2xx };
}

process.on('message', async ({ id, url, connections, durationMs, amount }) => {
  try {
    const r =
      amount === undefined
        ? await timed(url, connections, durationMs)
        : await counted(url, connections, amount);
    process.send({ id, ...r });
  } catch (error) {
    process.send({ id, error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
