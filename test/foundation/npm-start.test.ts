import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { freePort } from '../../src/net/free-port.js';
import { createClient } from '../../src/client/index.js';
import { answered, http } from '../support/harness.js';
import { processTree } from '../../scripts/bench-proc.js';

interface Started {
  child: ChildProcess;
  output: () => string;
}

/** `npm start` exactly as an operator runs it, with its own embedded Temporal dev server. */
function npmStart(env: Record<string, string>): Started {
  let output = '';
  const child = spawn('npm', ['start', '--silent'], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

/** The memory mappings of the service's own Node process under npm. */
function serviceMaps(started: Started): string {
  const pids = processTree(started.child.pid ?? -1);
  const service = pids.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dist/src/cli/main.js'));
  return readFileSync(`/proc/${service}/maps`, 'utf8');
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * SIGTERM to npm, which passes it to the service; npm itself then ends by
 * that signal, so success is judged by the service's own drain: its log
 * line and the embedded Temporal server's pid file being removed.
 */
async function stop(started: Started, dataDir: string): Promise<void> {
  await new Promise<void>((resolve) => {
    started.child.once('exit', () => resolve());
    started.child.kill('SIGTERM');
  });
  await waitFor(
    'the service to drain',
    async () => (existsSync(path.join(dataDir, 'temporal-dev-server.pid')) ? undefined : true),
    30_000,
  );
  expect(started.output()).toContain('"msg":"shutting down"');
  expect(started.output()).not.toContain('shutdown failed');
  // A clean stop logs no error: no worker shut down twice, no connection closed under a worker.
  expect(
    started
      .output()
      .split('\n')
      .filter((line) => /"level":(50|60)/.test(line)),
  ).toEqual([]);
}

describe('npm start on an empty data directory', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-start-'));
  const running: ChildProcess[] = [];
  afterAll(() => {
    for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('comes up with embedded Temporal, prints a key once, drains on SIGTERM and keeps data across a restart', async () => {
    const ports = {
      api: await freePort(),
      temporal: await freePort(),
      ui: await freePort(),
      metrics: await freePort(),
    };
    const env = {
      CASEFLOW_DATA_DIR: dataDir,
      PORT: String(ports.api),
      HOST: '127.0.0.1',
      TEMPORAL_ADDRESS: '',
      TEMPORAL_DEV_PORT: String(ports.temporal),
      TEMPORAL_DEV_UI_PORT: String(ports.ui),
      CASEFLOW_WORKER_METRICS_PORT: String(ports.metrics),
    };
    const base = `http://127.0.0.1:${ports.api}`;

    const first = npmStart(env);
    running.push(first.child);
    const key = await waitFor(
      'the printed key',
      async () => /CASEFLOW_API_KEY=(\S+)/.exec(first.output())?.[1],
      120_000,
    );
    const anonymous = createClient({ baseUrl: base });
    const ready = await waitFor('readiness', async () => (await anonymous.GET('/readyz')).data, 60_000);
    expect(ready).toMatchObject({ checks: { store: { ok: true }, temporal: { ok: true } } });
    await answered(createClient({ baseUrl: base, key }).GET('/api/v1/me'), 200);
    expect(existsSync(path.join(dataDir, 'temporal.db'))).toBe(true);
    // The service allocates with jemalloc, which hands memory freed after a burst back (docs/performance.md).
    expect(serviceMaps(first)).toContain('libjemalloc.so.2');
    expect(first.output()).not.toContain('cannot be preloaded');
    expect(existsSync(path.join(dataDir, 'caseflow.db'))).toBe(true);
    const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
    expect(ui.status).toBe(200);
    // /metrics is not a route of the document: a raw request.
    const metrics = await http(`${base}/metrics`, 'GET');
    expect(metrics.text).toContain('caseflow_http_requests_total');
    expect(metrics.text).toMatch(/^temporal_\w+/m);
    // The key appears in the banner only, never in a structured log line.
    expect(
      first
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{') && l.includes(key)),
    ).toEqual([]);

    await stop(first, dataDir);

    const second = npmStart(env);
    running.push(second.child);
    await waitFor('readiness after restart', async () => (await anonymous.GET('/readyz')).data, 120_000);
    await answered(createClient({ baseUrl: base, key }).GET('/api/v1/me'), 200);
    expect(second.output()).not.toContain('CASEFLOW_API_KEY=');
    await stop(second, dataDir);
  }, 300_000);
});
