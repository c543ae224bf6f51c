/**
 * The dependency of the http-fetch scenario, run in a process of its own (see http.mjs): a
 * node:http server on a loopback port answering every request with 200 and a 2-byte body,
 * keeping connections alive. It sends its port to the parent and exits when the parent goes.
 */
import { createServer } from 'node:http';

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
  res.end('ok');
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
