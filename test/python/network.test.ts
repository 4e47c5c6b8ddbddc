import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PythonRunnerPool } from '../../src/python/pool.js';
import { type ContainmentPools, type CountingListener, startContainmentPools, stopContainmentPools, failed } from './pool-helpers.js';

/**
 * Integration actions with `network: true` run in a separate pool whose
 * servers share the host network namespace; Landlock only allows TCP connect
 * to ports 443 and 80, and the audit hook refuses loopback/link-local
 * addresses. A listener on the host loopback must never see a connection.
 */
let pools: ContainmentPools;
let full: PythonRunnerPool;
let osOnly: PythonRunnerPool;
let listener: CountingListener;

beforeAll(async () => {
  pools = await startContainmentPools({ size: 1, networkSize: 1 });
  ({ full, osOnly, listener } = pools);
});
afterAll(() => stopContainmentPools(pools));

const connect = (host: string, p: number): string =>
  `import http.client\nc = http.client.HTTPConnection(${JSON.stringify(host)}, ${p}, timeout=3)\nc.request("GET", "/")\nresult["status"] = c.getresponse().status\n`;

describe('network access for integration actions', () => {
  test('network modules are importable only with network', async () => {
    const r = await full.run({ form: 'script', source: 'import urllib.request, http.client, ssl\nresult["ok"] = True\n', inputs: {}, network: true });
    expect(r).toMatchObject({ ok: true, outputs: { ok: true } });
    expect(full.stats().networkServers).toBe(1);
  });

  test('loopback is refused by the audit hook', async () => {
    const r = await full.run({ form: 'script', source: connect('127.0.0.1', listener.port), inputs: {}, network: true });
    expect(failed(r).message).toBe('RuntimeError: connections to 127.0.0.1 are not allowed');
    const meta = await full.run({ form: 'script', source: connect('169.254.169.254', 80), inputs: {}, network: true });
    expect(failed(meta).message).toMatch(/connections to 169.254.169.254 are not allowed/);
  });

  test('ports other than 443/80 are refused by Landlock even without the hook', async () => {
    const r = await osOnly.run({ form: 'script', source: connect('127.0.0.1', listener.port), inputs: {}, network: true });
    expect(failed(r).message).toMatch(/PermissionError: \[Errno 13\]/);
    expect(listener.connections).toBe(0);
  });

  test('calls without network stay in the isolated pool', async () => {
    const r = await osOnly.run({ form: 'main', source: 'def main(i):\n    I = caseflow.log.__globals__["__builtins__"]["__import__"]\n    I("socket").socket()\n    return {}\n', inputs: {} });
    expect(failed(r).message).toMatch(/PermissionError: \[Errno 1\]/);
  });
});
