import { Agent, request, fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  HttpStatusError,
  type ProtectedDispatchInterceptor,
  protectedDispatch,
  runWithRequestContext,
} from '../../../src/http/index.js';
import { ErrorCode } from '../../../src/index.js';
import {
  type Script,
  type ScriptedServer,
  startScriptedServer,
} from '../../support/scriptedServer.js';

const servers: ScriptedServer[] = [];
const agents: Agent[] = [];
async function serve(script: Script): Promise<ScriptedServer> {
  const s = await startScriptedServer(script);
  servers.push(s);
  return s;
}
/** An undici agent through a protected interceptor whose retries wait 0 ms. */
function agentWith(options: Parameters<typeof protectedDispatch>[0] = {}) {
  const interceptor = protectedDispatch({ retry: { random: () => 0 }, ...options });
  const agent = new Agent();
  agents.push(agent);
  return { interceptor, dispatcher: agent.compose(interceptor) };
}
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('protectedDispatch (an undici interceptor)', () => {
  it('retries a GET and hands the caller only the answer it ends with', async () => {
    const server = await serve((_, i) =>
      i < 2 ? { status: 503, body: 'busy' } : { status: 200, body: 'fine' },
    );
    const { dispatcher } = agentWith();
    const res = await request(server.url, { dispatcher });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('fine');
    expect(server.requests).toHaveLength(3);
  });

  it('returns the last failure with its body after the retries, and sends a POST once', async () => {
    const server = await serve((_, i) => ({ status: 503, body: `busy ${i}` }));
    const { dispatcher } = agentWith();
    const res = await request(server.url, { dispatcher });
    expect([res.statusCode, await res.body.text()]).toEqual([503, 'busy 2']);
    const post = await request(server.url, { dispatcher, method: 'POST', body: 'order' });
    await post.body.text();
    expect(server.requests).toHaveLength(4);
    const keyed = await request(server.url, {
      dispatcher,
      method: 'POST',
      body: 'order',
      headers: { 'idempotency-key': 'k' },
    });
    await keyed.body.text();
    expect(server.requests.slice(4).map((r) => r.body)).toEqual(['order', 'order', 'order']);
  });

  it('aborts the attempts it does not return, so their connections are not held', async () => {
    const server = await serve((_, i) =>
      i === 0 ? { status: 503, body: 200 } : { status: 200, body: 'ok' },
    );
    const { dispatcher } = agentWith();
    const res = await request(server.url, { dispatcher });
    expect(await res.body.text()).toBe('ok');
    await expect.poll(() => server.requests[0]!.aborted).toBe(true);
  });

  it('streams a long body of the answer it returns', async () => {
    const server = await serve(() => ({ status: 200, body: 30 }));
    const { dispatcher } = agentWith({ attemptTimeout: 100 });
    const res = await request(server.url, { dispatcher });
    expect(await res.body.text()).toBe('x'.repeat(30));
  });

  it('works under undici fetch, with the deadline of the request context sent', async () => {
    const server = await serve(() => ({ status: 200, body: 'via fetch' }));
    const { dispatcher } = agentWith();
    const res = await runWithRequestContext({ timeout: 500, criticality: 'sheddable' }, () =>
      undiciFetch(server.url, { dispatcher }),
    );
    expect(await res.text()).toBe('via fetch');
    expect(Number(server.requests[0]!.headers['x-timeout-ms'])).toBeLessThan(500);
    expect(server.requests[0]!.headers['x-criticality']).toBe('sheddable');
  });

  it('fails with the typed errors: a refusal, a rejected status', async () => {
    const server = await serve(() => ({ status: 500 }));
    const { dispatcher, interceptor } = agentWith({ retry: false, failedResponse: 'reject' });
    for (let i = 0; i < 10; i++) {
      const e = await request(server.url, { dispatcher }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(HttpStatusError);
    }
    expect((interceptor as ProtectedDispatchInterceptor).stats(server.origin)?.breaker?.state).toBe(
      'open',
    );
    await expect(request(server.url, { dispatcher })).rejects.toMatchObject({
      code: ErrorCode.CircuitOpen,
    });
    expect(server.requests).toHaveLength(10);
  });

  it('hedges an idempotent request and aborts the loser at the server', async () => {
    const server = await serve((_, i) => (i === 0 ? 'hang' : { status: 200, body: 'hedge' }));
    const { dispatcher, interceptor } = agentWith({ hedge: { delay: 30 } });
    const res = await request(server.url, { dispatcher });
    expect(await res.body.text()).toBe('hedge');
    await expect.poll(() => server.requests[0]!.aborted).toBe(true);
    interceptor.dispose();
    await expect(request(server.url, { dispatcher })).rejects.toMatchObject({
      code: ErrorCode.Usage,
    });
  });

  it('times out an attempt that gets no headers, and lets the caller abort', async () => {
    const server = await serve((_, i) => (i === 0 ? 'hang' : { status: 200, body: 'second' }));
    const { dispatcher } = agentWith({ attemptTimeout: 100 });
    const res = await request(server.url, { dispatcher });
    expect(await res.body.text()).toBe('second');
    server.setScript(() => 'hang');
    const controller = new AbortController();
    const pending = request(server.url, { dispatcher, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('caller gave up')), 50);
    await expect(pending).rejects.toThrow();
  });
});
