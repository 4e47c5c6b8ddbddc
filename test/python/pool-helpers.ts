import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { expect } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { configuredPoolOptions, PythonRunnerPool } from '../../src/python/pool.js';
import type { PythonPoolOptions, PythonRunResult } from '../../src/python/types.js';

/** What the service's pool takes from its configuration (config/default.json): the tests' pools take the same. */
export const configured = configuredPoolOptions(loadConfig({}).python);

export async function createPool(options: Partial<PythonPoolOptions> = {}): Promise<PythonRunnerPool> {
  const pool = await PythonRunnerPool.create({ ...configured, size: 2, ...options });
  // These tests are about the contained runner; a host without it must fail loudly, not skip.
  expect(pool.stats().capabilities?.problems).toEqual([]);
  expect(pool.stats().mode).toBe('contained');
  return pool;
}

/** All host descendants of pid (bwrap forks before python starts). */
export function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch {
      // process went away
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i += 1) {
    for (const [child, ppid] of parent) if (ppid === out[i]) out.push(child);
  }
  return out;
}

/** Polls `probe` every 50 ms (10 s at most) until it returns a value. */
export async function until<T>(probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('not within 10 s');
}

export const NORMAL = 'def main(inputs):\n    return {"sum": inputs["a"] + inputs["b"]}\n';

/** After every attack the pool must still answer an ordinary call. */
export async function expectHealthy(pool: PythonRunnerPool): Promise<void> {
  const r = await pool.run({ form: 'main', source: NORMAL, inputs: { a: 2, b: 3 } });
  expect(r).toMatchObject({ ok: true, outputs: { sum: 5 } });
}

export function failed(r: PythonRunResult): { kind: string; message: string } {
  if (r.ok) throw new Error(`expected a failure, got outputs ${JSON.stringify(r.outputs)}`);
  return r.error;
}

export function succeeded(r: PythonRunResult): Record<string, unknown> {
  if (!r.ok) throw new Error(`expected outputs, got ${r.error.kind}: ${r.error.message}`);
  return r.outputs;
}

export function main(body: string): string {
  return `def main(inputs):\n${body
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')}\n`;
}

/** A TCP listener on the host loopback that counts connections: contained code must never reach it. */
export interface CountingListener {
  port: number;
  connections: number;
  close(): void;
}

async function startCountingListener(): Promise<CountingListener> {
  const state = { port: 0, connections: 0, close: () => server.close() };
  const server = createServer((socket) => {
    state.connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  state.port = typeof address === 'object' && address ? address.port : 0;
  return state;
}

export interface ContainmentPools {
  /** Every layer, the audit-hook policy included. */
  full: PythonRunnerPool;
  /** The operating-system layers alone, to show they contain an attack on their own. */
  osOnly: PythonRunnerPool;
  listener: CountingListener;
}

export async function startContainmentPools(options: Partial<PythonPoolOptions> = {}): Promise<ContainmentPools> {
  return {
    full: await createPool(options),
    osOnly: await createPool({ ...options, auditHook: false }),
    listener: await startCountingListener(),
  };
}

export async function stopContainmentPools(pools: Partial<ContainmentPools>): Promise<void> {
  await pools.full?.close();
  await pools.osOnly?.close();
  pools.listener?.close();
}
