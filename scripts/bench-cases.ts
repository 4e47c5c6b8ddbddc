import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/logging/logger.js';
import { startService } from '../src/service.js';
import type { BootstrapResult } from '../src/tenancy/tenancy-service.js';
import { percentile } from './bench-stats.js';
import { pythonAddGraph } from './bench-graph.js';
import { startBenchDevServer } from './bench-subjects.js';

/**
 * Cases of input → Python code → output on the embedded stack (own dev
 * server on free ports, the service in this process), at a fixed
 * concurrency: sustained cases/s and latency from the execute request to the
 * completed run. BENCH_CASES (default 500) and BENCH_CONCURRENCY (default 16).
 */
export async function benchCases(): Promise<void> {
  const total = Number(process.env.BENCH_CASES ?? 500);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-bench-cases-'));
  const logger = createLogger('warn');
  const dev = await startBenchDevServer(dataDir, logger);
  let bootstrap: BootstrapResult | undefined;
  const config = loadConfig(
    {},
    {
      dataDir,
      host: '127.0.0.1',
      port: 0,
      logLevel: 'warn',
      temporal: { address: dev.address, taskQueue: 'bench-cases', workerMetricsPort: 0 },
    },
  );
  const service = await startService({ config, logger, role: 'all', onBootstrap: (b) => (bootstrap = b) });
  try {
    if (service.context.python.stats().mode !== 'contained')
      console.log('cases: python runs WITHOUT full containment on this host');
    const key = bootstrap?.key.key ?? '';
    const call = async (method: string, urlPath: string, body: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(`${service.url}${urlPath}`, {
        method,
        headers: { 'content-type': 'application/json', 'x-service-key': key, ...headers },
        body: JSON.stringify(body),
      });
      const json = (await r.json()) as Record<string, unknown>;
      if (r.status >= 300) throw new Error(`${method} ${urlPath} → ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    const workspaceId = bootstrap?.workspace.id ?? '';
    const wf = await call(
      'POST',
      '/api/v1/workflow',
      { name: 'bench', activeStatus: 'active', ...pythonAddGraph() },
      { 'x-workspace-id': workspaceId },
    );
    // Completion as callers see it: the case row turning terminal. One query
    // every few milliseconds for all cases in flight keeps the observer cheap.
    const waiting = new Map<string, (status: string) => void>();
    const db = service.context.store.db;
    const poller = setInterval(() => {
      const ids = [...waiting.keys()];
      if (ids.length === 0) return;
      void db
        .selectFrom('cases')
        .select(['id', 'status'])
        .where('id', 'in', ids)
        .where('status', 'not in', ['PENDING', 'RUNNING'])
        .execute()
        .then((rows) => {
          for (const row of rows) {
            waiting.get(row.id)?.(row.status);
            waiting.delete(row.id);
          }
        });
    }, 2);
    poller.unref();
    const ended = (caseId: string) => new Promise<string>((resolve) => waiting.set(caseId, resolve));

    const runOne = async (i: number): Promise<number> => {
      const { caseId } = (await call('POST', '/api/v1/case', { workflowId: wf.workflowId })) as { caseId: string };
      const t = performance.now();
      await call('POST', `/api/v1/case/${caseId}/execute`, { inputs: { a: i, b: 1 } });
      const status = await ended(caseId);
      if (status !== 'COMPLETED') throw new Error(`case ${caseId} ended ${status}`);
      return performance.now() - t;
    };
    const runBatch = async (count: number): Promise<{ latencies: number[]; seconds: number }> => {
      const latencies: number[] = [];
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < count) {
            const i = next++;
            latencies.push(await runOne(i));
          }
        }),
      );
      return { latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - started) / 1000 };
    };
    await runBatch(Math.min(50, total));
    const { latencies, seconds } = await runBatch(total);
    const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
    console.log(
      `cases: ${total} cases of input → python → output, concurrency ${concurrency}, ${os.availableParallelism()} CPUs`,
    );
    console.log(`cases: sustained ${(total / seconds).toFixed(1)} cases/s (initiate + execute + run)`);
    console.log(
      `cases: execute → COMPLETED p50 ${fmt(percentile(latencies, 50))}  p95 ${fmt(percentile(latencies, 95))}  p99 ${fmt(percentile(latencies, 99))}`,
    );
    const serial = await (async () => {
      const l: number[] = [];
      for (let i = 0; i < 50; i++) l.push(await runOne(i));
      return l.sort((a, b) => a - b);
    })();
    console.log(
      `cases: one at a time, execute → COMPLETED p50 ${fmt(percentile(serial, 50))}  p95 ${fmt(percentile(serial, 95))}`,
    );
    clearInterval(poller);
  } finally {
    await service.stop();
    await dev.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
