// @ts-check
/**
 * The dependency the demo calls: a real HTTP server on a loopback port whose behaviour follows
 * a script of timed phases (healthy, failing, slow, recovered).
 */
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * One phase of the script.
 * - `ok`: 200 after `latency` ms;
 * - `error`: 503 after `latency` ms;
 * - `reset`: the connection is destroyed without a response (the client sees a network error).
 * @typedef {object} Phase
 * @property {string} name Label shown in the demo's output.
 * @property {number} ms How long the phase lasts.
 * @property {'ok' | 'error' | 'reset'} behaviour
 * @property {number} [latency] Delay before answering, in ms (default 0).
 */

/**
 * The demo's script: healthy, failing, slow, recovered, each `phaseMs` long.
 * @param {{ phaseMs: number | readonly number[], slowLatency?: number, failure?: 'error' | 'reset' }} options
 *   `phaseMs`: one length for every phase, or one per phase.
 * @returns {Phase[]}
 */
export function scriptedPhases({ phaseMs, slowLatency = 1500, failure = 'error' }) {
  const ms = typeof phaseMs === 'number' ? [phaseMs, phaseMs, phaseMs, phaseMs] : phaseMs;
  if (ms.length !== 4) throw new RangeError(`Expected 4 phase lengths, got ${ms.length}`);
  return [
    { name: 'healthy', ms: ms[0], behaviour: 'ok', latency: 5 },
    { name: 'failing', ms: ms[1], behaviour: failure, latency: 0 },
    { name: 'slow', ms: ms[2], behaviour: 'ok', latency: slowLatency },
    { name: 'recovered', ms: ms[3], behaviour: 'ok', latency: 5 },
  ];
}

/**
 * The phase in force `t` ms after the script began. Before 0 it is the first phase; after the
 * end, the last one lasts forever.
 * @param {readonly Phase[]} phases
 * @param {number} t
 * @returns {Phase}
 */
export function phaseAt(phases, t) {
  let end = 0;
  for (const phase of phases) {
    end += phase.ms;
    if (t < end) return phase;
  }
  return phases[phases.length - 1];
}

/**
 * @typedef {object} Dependency
 * @property {string} url Where to send requests (`http://127.0.0.1:<port>/`).
 * @property {() => number} requests How many requests reached the server so far.
 * @property {() => readonly number[]} arrivals When each request arrived, in script time (ms).
 * @property {() => number} peakInFlight The most requests it held open at once (arrived, not yet
 *   answered nor abandoned by the client): the load callers put on it.
 * @property {() => Phase} phase The phase in force now.
 * @property {() => Promise<void>} close Stops the server, dropping open connections and
 *   pending slow answers.
 */

/**
 * Starts the scripted server on a free loopback port.
 * @param {{ phases: readonly Phase[], now?: () => number }} options
 *   `now`: the script's time in ms; by default, ms since `start` was called.
 * @returns {Promise<Dependency>}
 */
export async function start({ phases, now }) {
  if (phases.length === 0) throw new RangeError('Expected at least one phase');
  const began = performance.now();
  const clock = now ?? (() => performance.now() - began);
  /** @type {number[]} */
  const arrivals = [];
  /** @type {Set<NodeJS.Timeout>} */
  const pending = new Set();
  let inFlight = 0;
  let peakInFlight = 0;

  const server = createServer((req, res) => {
    const t = clock();
    arrivals.push(t);
    const phase = phaseAt(phases, t);
    if (phase.behaviour === 'reset') {
      req.socket.destroy();
      return;
    }
    if (++inFlight > peakInFlight) peakInFlight = inFlight;
    const answer = () => {
      pending.delete(timer);
      const status = phase.behaviour === 'ok' ? 200 : 503;
      const body = `${phase.name}\n`;
      res.writeHead(status, {
        'content-type': 'text/plain',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    };
    const timer = setTimeout(answer, phase.latency ?? 0);
    pending.add(timer);
    // A client that gave up (its timeout aborted the request) needs no answer.
    // 'close' comes once per response, answered or not.
    res.on('close', () => {
      inFlight--;
      clearTimeout(timer);
      pending.delete(timer);
    });
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('Expected a TCP address');

  return {
    url: `http://127.0.0.1:${address.port}/`,
    requests: () => arrivals.length,
    arrivals: () => arrivals,
    peakInFlight: () => peakInFlight,
    phase: () => phaseAt(phases, clock()),
    close: () =>
      new Promise((resolve, reject) => {
        for (const timer of pending) clearTimeout(timer);
        pending.clear();
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive connections would hold close() open until they time out.
        server.closeAllConnections();
      }),
  };
}
