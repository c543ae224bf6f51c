/**
 * A loopback HTTP server that holds each request a few ms and counts those in flight and the
 * fencing tokens it was sent (`?fence=`): the shared dependency of the Redis bulkhead's
 * multi-process tests.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startCountingServer() {
  const state = { inFlight: 0, maxInFlight: 0, requests: 0, tokens: new Set<number>() };
  const server = createServer((req, res) => {
    state.inFlight++;
    state.requests++;
    if (state.inFlight > state.maxInFlight) state.maxInFlight = state.inFlight;
    state.tokens.add(Number(new URL(req.url!, 'http://x').searchParams.get('fence')));
    setTimeout(
      () => {
        state.inFlight--;
        res.end('ok');
      },
      5 + (state.requests % 4) * 5,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    state,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
