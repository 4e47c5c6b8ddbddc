import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { Outbound, OutboundRefusedError, type Resolver } from '../../src/net/outbound.js';
import { Receiver } from './receiver.js';

const refused = (outbound: Outbound, url: string) =>
  expect(outbound.checkUrl(url)).rejects.toBeInstanceOf(OutboundRefusedError);

describe('outbound policy', () => {
  it('refuses loopback, private, CGNAT and ULA unless allowed, and link-local/metadata always', async () => {
    const strict = new Outbound();
    for (const url of [
      'http://127.0.0.1:8233/api/v1/namespaces',
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://[::1]/',
      'http://[fd12::1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
      'http://[fd00:ec2::254]/',
      'http://100.100.100.200/',
      'http://0.0.0.0/',
      'http://[::]/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:a9fe:a9fe]/',
      'ftp://example.com/',
      'file:///etc/passwd',
    ]) {
      await refused(strict, url);
    }
    const open = new Outbound({ allowCidrs: '0.0.0.0/0,::/0' });
    await expect(open.checkUrl('http://127.0.0.1/')).resolves.toBeDefined();
    await expect(open.checkUrl('http://10.0.0.1/')).resolves.toBeDefined();
    for (const url of [
      'http://169.254.169.254/',
      'http://[fd00:ec2::254]/',
      'http://100.100.100.200/',
      'http://[::ffff:169.254.169.254]/',
      'http://0.0.0.0/',
    ]) {
      await refused(open, url);
    }
  });

  it('checks the IPv4 address that NAT64, 6to4 and Teredo forms carry', async () => {
    const strict = new Outbound();
    for (const url of [
      'http://[64:ff9b::7f00:1]/', // NAT64 of 127.0.0.1
      'http://[64:ff9b::a9fe:a9fe]/', // NAT64 of the metadata address
      'http://[64:ff9b::10.0.0.1]/',
      'http://[2002:7f00:1::1]/', // 6to4 of 127.0.0.1
      'http://[2002:a9fe:a9fe::]/',
      'http://[2001:0:a9fe:a9fe::1]/', // Teredo server 169.254.169.254
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', // Teredo client ~ 127.0.0.1
      'http://[::7f00:1]/', // IPv4-compatible loopback
    ]) {
      await refused(strict, url);
    }
    // Public IPv4 behind the same forms stays reachable.
    await expect(strict.checkUrl('http://[64:ff9b::5db8:d70e]/')).resolves.toBeDefined();
    await expect(strict.checkUrl('http://[2002:5db8:d70e::1]/')).resolves.toBeDefined();
    // Allowing loopback allows it in every form; metadata never.
    const loopback = new Outbound({ allowCidrs: '127.0.0.0/8,64:ff9b::/96,2002::/16' });
    await expect(loopback.checkUrl('http://[64:ff9b::7f00:1]/')).resolves.toBeDefined();
    await refused(loopback, 'http://[64:ff9b::a9fe:a9fe]/');
    expect(strict.refusal('64:ff9b::a9fe:a9fe')?.message).toMatch(/carries 169\.254\.169\.254/);
  });

  it('refuses a host name when any of its addresses is refused', async () => {
    const resolve: Resolver = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    await refused(new Outbound({ resolve }), 'http://mixed.example/');
    await refused(new Outbound(), 'http://localhost/');
  });

  it('connects to the address it checked: a name that rebinds to loopback after the check never reaches it', async () => {
    const hook = new Receiver();
    const port = await hook.listen();
    try {
      // First answer allowed (passes the check; nothing listens there), every later answer the
      // receiver's refused address: a rebinding resolver. Loopback only: tests send nowhere else.
      let calls = 0;
      const resolve: Resolver = async (): Promise<LookupAddress[]> => {
        calls += 1;
        return [{ address: calls === 1 ? '127.0.0.2' : '127.0.0.1', family: 4 }];
      };
      const outbound = new Outbound({ allowCidrs: '127.0.0.2/32', resolve });
      await expect(
        outbound.request(`http://rebind.example:${port}/`, { timeoutMs: 1500, maxResponseBytes: 100 }),
      ).rejects.toThrow();
      expect(hook.received).toHaveLength(0);
      // At the next delivery the name resolves to loopback: refused before connecting.
      await expect(
        outbound.request(`http://rebind.example:${port}/`, { timeoutMs: 1500, maxResponseBytes: 100 }),
      ).rejects.toBeInstanceOf(OutboundRefusedError);
      expect(hook.received).toHaveLength(0);
    } finally {
      await hook.close();
    }
  });

  it('does not follow redirects and caps the body read', async () => {
    const target = new Receiver();
    await target.listen();
    const redirecting = new Receiver((_call, res) => {
      res.statusCode = 302;
      res.setHeader('location', target.url);
      res.end('y'.repeat(5000));
    });
    await redirecting.listen();
    try {
      const outbound = new Outbound({ allowCidrs: '127.0.0.1/32' });
      const response = await outbound.request(redirecting.url, {
        method: 'POST',
        body: '{}',
        timeoutMs: 2000,
        maxResponseBytes: 10,
      });
      expect(response).toEqual({ status: 302, body: 'y'.repeat(10) });
      expect(target.received).toHaveLength(0);
    } finally {
      await Promise.all([target.close(), redirecting.close()]);
    }
  });

  it('connect (the tunnel primitive for Python egress) checks like a URL, says why it refused, and connects to the checked address', async () => {
    const hook = new Receiver();
    const port = await hook.listen();
    try {
      const names: Record<string, string> = { 'hook.example': '127.0.0.1', 'meta.example': '169.254.169.254' };
      const resolve: Resolver = async (host) => [{ address: names[host] ?? '192.0.2.1', family: 4 }];
      const strict = new Outbound({ resolve });
      await expect(strict.connect('hook.example', port, 1000)).rejects.toMatchObject({
        reason: 'private',
        message: 'hook.example resolves to 127.0.0.1 is a private or loopback address',
      });
      await expect(strict.connect('[::1]', port, 1000)).rejects.toMatchObject({ reason: 'private' });
      await expect(strict.connect('hook.example', 0, 1000)).rejects.toMatchObject({ reason: 'invalid' });
      const open = new Outbound({ allowCidrs: '0.0.0.0/0', resolve });
      await expect(open.connect('meta.example', 80, 1000)).rejects.toMatchObject({ reason: 'reserved' });
      const { socket, address } = await open.connect('hook.example', port, 1000);
      expect(address).toBe('127.0.0.1');
      expect(socket.remoteAddress).toBe('127.0.0.1');
      socket.destroy();
    } finally {
      await hook.close();
    }
  });

  it('reaches an operator-named host:port on loopback, and nothing else there', async () => {
    const echo = new Receiver();
    const port = await echo.listen();
    const other = new Receiver();
    const otherPort = await other.listen();
    try {
      const send = (outbound: Outbound, url: string) =>
        outbound.request(url, { method: 'POST', body: '{}', timeoutMs: 2000, maxResponseBytes: 100 });
      const url = `http://127.0.0.1:${port}/echo`;
      await expect(send(new Outbound(), url)).rejects.toMatchObject({ reason: 'private' });
      const named = new Outbound({ allowTargets: `127.0.0.1:${port}` });
      expect((await send(named, url)).status).toBe(200);
      expect(echo.received).toHaveLength(1);
      // Any spelling of the same address is the same target; another port, or the host's other addresses, are not.
      await expect(named.checkUrl(`http://0x7f.1:${port}/`)).resolves.toBeDefined();
      await expect(send(named, `http://127.0.0.1:${otherPort}/`)).rejects.toMatchObject({ reason: 'private' });
      await expect(named.checkUrl(`http://[::1]:${port}/`)).rejects.toMatchObject({ reason: 'private' });
      await expect(named.checkUrl('http://127.0.0.1/')).rejects.toBeInstanceOf(OutboundRefusedError);
      expect(other.received).toHaveLength(0);
      const tunnel = await named.connect('127.0.0.1', port, 1000);
      tunnel.socket.destroy();
      await expect(named.connect('127.0.0.1', otherPort, 1000)).rejects.toMatchObject({ reason: 'private' });
      // A named host name passes whatever it resolves to, but never the metadata or link-local ranges.
      const names: Record<string, string> = { 'echo.test': '127.0.0.1', 'meta.test': '169.254.169.254' };
      const resolve: Resolver = async (host) => [{ address: names[host] ?? '192.0.2.1', family: 4 }];
      const byName = new Outbound({ allowTargets: `ECHO.test:${port},meta.test:80`, resolve });
      expect((await send(byName, `http://echo.test:${port}/`)).status).toBe(200);
      await expect(byName.checkUrl(`http://echo.test:${otherPort}/`)).rejects.toMatchObject({ reason: 'private' });
      await expect(byName.checkUrl('http://meta.test/')).rejects.toMatchObject({ reason: 'reserved' });
      await expect(byName.checkUrl(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ reason: 'private' });
    } finally {
      await Promise.all([echo.close(), other.close()]);
    }
  });

  it('refuses a malformed allowlist at start, naming the setting', () => {
    for (const targets of ['127.0.0.1', '127.0.0.1:0', 'host:99999', '::1:80', 'a b:80', '10.0.0.0/8:80'])
      expect(() => loadConfig({ CASEFLOW_OUTBOUND_ALLOW_TARGETS: targets }), targets).toThrow(
        /CASEFLOW_OUTBOUND_ALLOW_TARGETS/,
      );
    expect(loadConfig({}).outbound.allowTargets).toBe('');
    expect(loadConfig({ CASEFLOW_OUTBOUND_ALLOW_TARGETS: '127.0.0.1:8787, [::1]:9000' }).outbound.allowTargets).toBe(
      '127.0.0.1:8787, [::1]:9000',
    );
    expect(() => loadConfig({ CASEFLOW_OUTBOUND_ALLOW_CIDRS: '10.0.0.0/8,not-a-cidr' })).toThrow(ConfigError);
    expect(() => loadConfig({ CASEFLOW_OUTBOUND_ALLOW_CIDRS: '10.0.0.0/33' })).toThrow(/CASEFLOW_OUTBOUND_ALLOW_CIDRS/);
    expect(loadConfig({ CASEFLOW_OUTBOUND_ALLOW_CIDRS: '10.0.0.0/8, fd00::/8' }).outbound.allowCidrs).toBe(
      '10.0.0.0/8, fd00::/8',
    );
  });
});
