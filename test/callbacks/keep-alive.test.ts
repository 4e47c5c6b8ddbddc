import type { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Outbound, OutboundRefusedError, type Resolver } from '../../src/net/outbound.js';
import { Receiver } from './receiver.js';

const post = (outbound: Outbound, url: string, resendOnStaleSocket = true) =>
  outbound.request(url, { method: 'POST', body: '{}', timeoutMs: 2000, maxResponseBytes: 100, resendOnStaleSocket });

/** A resolver whose answers the test changes between requests, as DNS may between deliveries. */
function switchableResolver(): { resolve: Resolver; point: (host: string, address: string) => void } {
  const names = new Map<string, string>();
  return {
    resolve: async (host) => [{ address: names.get(host) ?? '192.0.2.1', family: 4 }],
    point: (host, address) => names.set(host, address),
  };
}

describe('outbound connection reuse', () => {
  let hook: Receiver;
  afterEach(() => hook.close());

  it('sends a busy receiver its requests over one kept-alive connection, bounded, and closes it once idle', async () => {
    hook = new Receiver();
    await hook.listen();
    const outbound = new Outbound({
      allowCidrs: '127.0.0.1/32',
      keepAlive: { idleMs: 200, maxSocketsPerAddress: 3, maxIdlePerAddress: 2 },
    });
    for (let i = 0; i < 5; i += 1) expect(await post(outbound, hook.url)).toEqual({ status: 200, body: 'ok' });
    expect(hook.received).toHaveLength(5);
    expect(hook.connections).toBe(1);

    // Ten at once against a slow receiver: never more than three sockets to it.
    let busiest = 0;
    hook.respondWith((_call, res) => {
      busiest = Math.max(busiest, hook.openConnections);
      setTimeout(() => res.end('ok'), 30);
    });
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(outbound, hook.url)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(busiest).toBe(3);
    expect(hook.connections).toBe(3);

    // Idle sockets go after idleMs; only two were kept.
    await vi.waitFor(() => expect(hook.openConnections).toBe(0), { timeout: 10_000, interval: 20 });
  });

  it('a kept-alive socket to an allowed address never carries a request the policy refuses or pinned elsewhere', async () => {
    hook = new Receiver();
    const port = await hook.listen();
    const dns = switchableResolver();
    const outbound = new Outbound({ allowCidrs: '127.0.0.0/8', resolve: dns.resolve });
    const url = `http://hook.example:${port}/hook`;
    dns.point('hook.example', '127.0.0.1');
    expect((await post(outbound, url)).status).toBe(200);
    expect(hook.openConnections).toBe(1);

    // The name now points inside: refused before any socket is taken, the open one included.
    for (const inside of ['10.0.0.1', '169.254.169.254', '192.168.1.1']) {
      dns.point('hook.example', inside);
      await expect(post(outbound, url)).rejects.toBeInstanceOf(OutboundRefusedError);
    }
    // Another allowed address: the request goes there (nothing listens on 127.0.0.2), not down the socket to 127.0.0.1.
    dns.point('hook.example', '127.0.0.2');
    await expect(post(outbound, url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(hook.received).toHaveLength(1);
    expect(hook.connections).toBe(1);

    // Back to the first address: its socket is reused.
    dns.point('hook.example', '127.0.0.1');
    expect((await post(outbound, url)).status).toBe(200);
    expect(hook.connections).toBe(1);
  });

  it('sends again on a new connection when the receiver had closed the kept-alive one', async () => {
    const served = new WeakMap<Socket, number>();
    hook = new Receiver((_call, res) => {
      const count = (served.get(res.socket as Socket) ?? 0) + 1;
      served.set(res.socket as Socket, count);
      // The second request on a connection finds it closed, as when a server's keep-alive timeout ends it.
      if (count === 2) res.socket?.destroy();
      else res.end('ok');
    });
    await hook.listen();
    const outbound = new Outbound({ allowCidrs: '127.0.0.1/32' });
    expect((await post(outbound, hook.url)).status).toBe(200);
    expect(await post(outbound, hook.url)).toEqual({ status: 200, body: 'ok' });
    expect(hook.connections).toBe(2);
    expect(hook.received).toHaveLength(3);

    // A request its peer may not take twice (a code exchange, a test call) gets the error: sent once.
    await expect(post(outbound, hook.url, false)).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(hook.received).toHaveLength(4);
    expect(hook.connections).toBe(2);
  });

  it('a request outlasting the idle time of sockets is still answered', async () => {
    hook = new Receiver((_call, res) => setTimeout(() => res.end('late'), 400));
    await hook.listen();
    const outbound = new Outbound({
      allowCidrs: '127.0.0.1/32',
      keepAlive: { idleMs: 100, maxSocketsPerAddress: 1, maxIdlePerAddress: 1 },
    });
    expect(await post(outbound, hook.url)).toEqual({ status: 200, body: 'late' });
    expect(await post(outbound, hook.url)).toEqual({ status: 200, body: 'late' });
  });
});
