import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { Resolver } from '../../src/net/outbound.js';
import { ownAddresses } from '../support/host-address.js';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { createPool, failed, main } from './pool-helpers.js';

/**
 * Network-enabled Python has no network of its own: its servers run in an
 * empty network namespace and reach the Node egress proxy over a unix
 * socket. The proxy resolves, checks with the outbound policy and connects
 * to the checked address; TLS stays in Python. Real servers on the host's
 * loopback stand in for the internet (tests allow 127.0.0.0/8 where needed).
 */
const names: Record<string, string> = {
  'tls.test': '127.0.0.1',
  'internal.test': '10.1.2.3',
  'loop.test': '127.0.0.1',
};
const resolve: Resolver = async (host) => {
  const address = names[host];
  if (!address) throw new Error(`ENOTFOUND ${host}`);
  return [{ address, family: 4 }];
};

let strict: PythonRunnerPool;
let allowing: PythonRunnerPool;
let osOnly: PythonRunnerPool;
let http: Server;
let https: Server;
let silentServer: TcpServer;
let httpPort: number;
let httpsPort: number;
let ca: string;
let silentPort: number;
let silentClosed = 0;
let httpRequests = 0;
const logLines: Array<Record<string, unknown>> = [];

function listen(server: TcpServer): Promise<number> {
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done((server.address() as AddressInfo).port)));
}

/** A self-signed certificate for tls.test (and 127.0.0.1), made with openssl for this run only. */
function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'caseflow-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=tls.test',
        '-addext',
        'subjectAltName=DNS:tls.test,IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  http = createHttpServer((req, res) => {
    httpRequests += 1;
    if (req.url === '/big') {
      res.end(Buffer.alloc(2 << 20, 120));
      return;
    }
    res.end(`hello from ${req.url}`);
  });
  httpPort = await listen(http);
  const tls = selfSigned();
  ca = tls.cert;
  https = createHttpsServer(tls, (req, res) => res.end(`secure ${req.headers.host}`));
  httpsPort = await listen(https);
  // Accepts and never answers: only the proxy's idle timeout ends such a tunnel.
  const silent = createTcpServer((socket) => socket.resume().on('close', () => (silentClosed += 1)));
  silentPort = await listen(silent);
  silentServer = silent;
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
          logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  const allow = {
    allowCidrs: '127.0.0.0/8',
    resolve,
    maxTunnelsPerCall: 2,
    maxBytesPerCall: 1 << 20,
    idleTimeoutMs: 1000,
  };
  strict = await createPool({ size: 1, networkSize: 1, egress: { resolve } });
  allowing = await createPool({ size: 1, networkSize: 1, egress: allow, logger });
  osOnly = await createPool({ size: 1, networkSize: 1, egress: allow, auditHook: false });
});
afterAll(async () => {
  await Promise.all([strict?.close(), allowing?.close(), osOnly?.close()]);
  http?.close();
  https?.close();
  silentServer?.close();
});

const get = (host: string, port: number, path = '/'): string =>
  `import http.client\nc = http.client.HTTPConnection(${JSON.stringify(host)}, ${port}, timeout=5)\n` +
  `c.request("GET", ${JSON.stringify(path)})\nr = c.getresponse()\nresult["status"] = r.status\nresult["body"] = r.read().decode()\n`;

const run = (pool: PythonRunnerPool, source: string, inputs: Record<string, unknown> = {}) =>
  pool.run({ form: 'script', source, inputs, network: true, organizationId: 'org-a' });

describe('egress through the outbound policy', () => {
  test('loopback is refused by the policy unless the operator allows it', async () => {
    const before = httpRequests;
    const refused = await run(strict, get('127.0.0.1', httpPort));
    expect(failed(refused).message).toBe(
      `EgressRefused: 127.0.0.1:${httpPort} refused by the caseflow outbound policy: 127.0.0.1 is a private or loopback address`,
    );
    expect(httpRequests).toBe(before);
    expect(strict.stats().egress.refused.private).toBeGreaterThanOrEqual(1);

    const allowed = await run(allowing, get('127.0.0.1', httpPort, '/x'));
    expect(allowed).toMatchObject({ ok: true, outputs: { status: 200, body: 'hello from /x' } });
    const viaUrllib = await run(
      allowing,
      `import urllib.request\nresult["body"] = urllib.request.urlopen("http://loop.test:${httpPort}/u", timeout=5).read().decode()\n`,
    );
    expect(viaUrllib).toMatchObject({ ok: true, outputs: { body: 'hello from /u' } });
    expect(httpRequests).toBe(before + 2);
  });

  test('the policy error is a RuntimeError code can tell from a network failure', async () => {
    const r = await run(
      strict,
      `try:\n    ${get('127.0.0.1', httpPort).split('\n').join('\n    ')}\nexcept RuntimeError as e:\n    result["policy"] = str(e)\n`,
    );
    expect(r).toMatchObject({
      ok: true,
      outputs: { policy: expect.stringContaining('refused by the caseflow outbound policy') },
    });
  });

  test('cloud metadata is refused even where loopback is allowed', async () => {
    const r = await run(allowing, get('169.254.169.254', 80, '/latest/meta-data/'));
    expect(failed(r).message).toMatch(
      /169\.254\.169\.254:80 refused by the caseflow outbound policy: .*link-local, metadata/,
    );
    expect(allowing.stats().egress.refused.reserved).toBeGreaterThanOrEqual(1);
  });

  test("this machine's own (eth0) addresses and special-purpose ranges are refused by the policy, in any spelling", async () => {
    // Refused at the proxy's decision: nothing is sent to the machine's non-loopback addresses.
    for (const address of ownAddresses()) {
      const r = await run(allowing, get(address.includes(':') ? `[${address}]` : address, 80));
      expect(failed(r).message, address).toMatch(
        /refused by the caseflow outbound policy: \S+ is an address of this host \(\S+\)$/,
      );
    }
    for (const [host, why] of <Array<[string, string]>>[
      ['198.18.0.1', 'benchmarking 198.18.0.0/15'],
      ['3221225985', 'TEST-NET-1'], // 192.0.2.1 as one decimal number
      ['0x7f.1', 'private or loopback'], // 127.0.0.1, the strict pool
      ['[2001:db8::1%eth0]', 'documentation 2001:db8::/32'], // http.client takes IPv6 in brackets
      ['[::ffff:c612:1]', 'it carries 198.18.0.1'],
    ]) {
      const r = await run(strict, get(host, 80));
      expect(failed(r).message, host).toMatch(/refused by the caseflow outbound policy/);
      expect(failed(r).message, host).toContain(why);
    }
  });

  test('a name resolving to a private address is refused (resolved by the proxy, not in the sandbox)', async () => {
    const r = await run(strict, get('internal.test', 80));
    expect(failed(r).message).toMatch(
      /internal\.test:80 refused by the caseflow outbound policy: internal\.test resolves to 10\.1\.2\.3 is a private/,
    );
    const unknown = await run(strict, get('nowhere.test', 443));
    expect(failed(unknown).message).toMatch(
      /nowhere\.test:443 refused by the caseflow outbound policy: host nowhere\.test does not resolve/,
    );
  });

  test('HTTPS is end to end in Python: the certificate and host name are verified through the tunnel', async () => {
    const source =
      'import http.client, ssl\nctx = ssl.create_default_context(cadata=input_data["ca"])\n' +
      `c = http.client.HTTPSConnection("tls.test", ${httpsPort}, context=ctx, timeout=5)\n` +
      'c.request("GET", "/")\nr = c.getresponse()\nresult["body"] = r.read().decode()\nresult["version"] = c.sock.version()\n';
    const r = await run(allowing, source, { ca });
    expect(r).toMatchObject({
      ok: true,
      outputs: { body: `secure tls.test:${httpsPort}`, version: expect.stringMatching(/^TLSv1\.[23]$/) },
    });
    // An SSLSocket connected after wrapping takes the same way out.
    const wrappedFirst = await run(
      allowing,
      'import ssl\nctx = ssl.create_default_context(cadata=input_data["ca"])\n' +
        `s = ctx.wrap_socket(ssl.socket(), server_hostname="tls.test")\ns.settimeout(5)\ns.connect(("tls.test", ${httpsPort}))\n` +
        's.sendall(b"GET / HTTP/1.0\\r\\nHost: tls.test\\r\\n\\r\\n")\ndata = b""\nwhile True:\n    chunk = s.recv(4096)\n    if not chunk:\n        break\n    data += chunk\n' +
        'result["tail"] = data.decode().split("\\r\\n\\r\\n", 1)[1]\n',
      { ca },
    );
    expect(wrappedFirst).toMatchObject({ ok: true, outputs: { tail: 'secure tls.test' } });
    // The same server under a name its certificate does not carry fails verification in Python.
    const wrongName = await run(allowing, source.replace('"tls.test"', '"loop.test"'), { ca });
    expect(failed(wrongName).message).toMatch(/SSLCertVerificationError|CertificateError/);
  });

  test('tunnels are attributed to the call organization in the logs', async () => {
    const seen = logLines.length;
    await run(allowing, get('127.0.0.1', httpPort, '/logged'));
    // The close is logged when the socket's close event fires, just after the call returns.
    await vi.waitFor(() =>
      expect(
        logLines.slice(seen).find((l) => l.msg === 'python egress tunnel closed' && l.port === httpPort),
      ).toMatchObject({
        org: 'org-a',
        host: '127.0.0.1',
        port: httpPort,
        address: '127.0.0.1',
        bytesUp: expect.any(Number),
        bytesDown: expect.any(Number),
      }),
    );
  });
});

describe('per-call limits', () => {
  test('at most maxTunnelsPerCall connections at once', async () => {
    const r = await run(
      allowing,
      `import http.client\nkeep = []\nfor _ in range(2):\n    c = http.client.HTTPConnection("127.0.0.1", ${httpPort}, timeout=5)\n    c.connect()\n    keep.append(c)\n` +
        `try:\n    http.client.HTTPConnection("127.0.0.1", ${httpPort}, timeout=5).connect()\nexcept RuntimeError as e:\n    result["third"] = str(e)\n`,
    );
    expect(r).toMatchObject({ ok: true, outputs: { third: 'at most 2 connections may be open at once' } });
    expect(allowing.stats().egress.refused['tunnel-limit']).toBeGreaterThanOrEqual(1);
  });

  test('the byte cap cuts the call off', async () => {
    const cut = allowing.stats().egress.cut;
    const r = await run(allowing, get('127.0.0.1', httpPort, '/big'));
    expect(failed(r).message).toMatch(/IncompleteRead|ConnectionResetError|RemoteDisconnected/);
    expect(allowing.stats().egress.cut).toBeGreaterThan(cut);
  });

  test('a tunnel idle past idleTimeoutMs is closed', async () => {
    const started = Date.now();
    const r = await run(allowing, get('127.0.0.1', silentPort));
    expect(failed(r).message).toMatch(/RemoteDisconnected/);
    expect(Date.now() - started).toBeLessThan(4000);
    await vi.waitFor(() => expect(silentClosed).toBeGreaterThanOrEqual(1));
  });
});

describe('no way around the proxy', () => {
  const escape = (body: string): string => main(`I = caseflow.log.__globals__["__builtins__"]["__import__"]\n${body}`);

  test('raw sockets (the audit hook off) reach nothing: TCP connect is denied, and there is no interface but an empty loopback', async () => {
    const before = httpRequests;
    const udp = createSocket('udp4');
    const datagrams: Buffer[] = [];
    udp.on('message', (m) => datagrams.push(m));
    await new Promise<void>((done) => udp.bind(0, '127.0.0.1', done));
    const udpPort = udp.address().port;
    const source = escape(
      '_socket = I("_socket")\nout = {}\n' +
        `for host in ("127.0.0.1", "192.0.2.1"):\n    s = _socket.socket(2, 1)\n    try:\n        s.connect((host, ${httpPort}))\n        out[host] = "connected"\n` +
        '    except OSError as e:\n        out[host] = e.errno\n' +
        `u = _socket.socket(2, 2)\nfor host in ("192.0.2.1", "127.0.0.1"):\n    try:\n        u.sendto(b"leak", (host, ${udpPort}))\n        out["udp " + host] = "sent"\n` +
        '    except OSError as e:\n        out["udp " + host] = e.errno\nreturn out',
    );
    const r = await osOnly.run({ form: 'main', source, inputs: {}, network: true });
    // TCP: Landlock denies connect (EACCES); UDP: no route out (ENETUNREACH), and the
    // sandbox's loopback is its own, so a datagram to 127.0.0.1 never reaches the host's.
    expect(r).toMatchObject({
      ok: true,
      outputs: { '127.0.0.1': 13, '192.0.2.1': 13, 'udp 192.0.2.1': 101, 'udp 127.0.0.1': 'sent' },
    });
    await new Promise((done) => setTimeout(done, 300));
    udp.close();
    expect(datagrams).toEqual([]);
    expect(httpRequests).toBe(before);
  });

  test('the proxy admits only the running call: a guessed token is refused', async () => {
    const source = escape(
      'socket = I("socket")\ns = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ns.connect("/egress/egress.sock")\n' +
        `s.sendall(b'{"token":"${'0'.repeat(32)}","host":"127.0.0.1","port":${httpPort}}\\n')\nreturn {"reply": s.recv(4096).decode()}`,
    );
    const r = await osOnly.run({ form: 'main', source, inputs: {}, network: true });
    expect(r).toMatchObject({ ok: true, outputs: { reply: expect.stringContaining('"reason":"unknown-call"') } });
  });

  test('calls without network have no socket at all', async () => {
    const r = await osOnly.run({ form: 'main', source: escape('I("socket").socket()\nreturn {}'), inputs: {} });
    expect(failed(r).message).toMatch(/PermissionError: \[Errno 1\]/);
  });
});
