import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config/config.js';
import { configuredPoolOptions, PythonRunnerPool } from '../src/python/pool.js';
import { cpuMsWithChildren } from './bench-proc.js';

const SOURCE = 'def main(inputs):\n    return {"sum": inputs["a"] + inputs["b"]}\n';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function fmt(ms: number): string {
  return `${ms.toFixed(2)} ms`;
}

/** CPU per call over a phase: the whole (this process and the servers' trees), and the Python side alone. */
function cpuPerCall(before: { total: number; self: number }, after: { total: number; self: number }, calls: number) {
  const total = (after.total - before.total) / calls;
  const python = total - (after.self - before.self) / calls;
  return `CPU ${total.toFixed(2)} ms per call (Python ${python.toFixed(2)} ms)`;
}

/** Warm per-call latency and throughput through the fully contained pool, next to a cold python start. */
export async function benchPython(): Promise<void> {
  const cold: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const t = performance.now();
    spawnSync('/usr/bin/python3', ['-I', '-S', '-c', 'pass']);
    cold.push(performance.now() - t);
  }
  cold.sort((a, b) => a - b);

  // BENCH_PYTHON_PREARM=0: the same build without children armed ahead of the call (an A/B of that lever alone).
  const prearm = process.env.BENCH_PYTHON_PREARM;
  // No server recycled while measuring: an ended server's CPU reaches this process late or not at all.
  const configured = configuredPoolOptions(loadConfig().python);
  const pool = await PythonRunnerPool.create({
    ...configured,
    // Every server warm (size 0: one per CPU), as before 5fcd634 made config's 1 the default: rounds stay comparable.
    warmServers: configured.size || availableParallelism(),
    recycleAfter: 1_000_000,
    prearmedPerServer: prearm === undefined ? undefined : Number(prearm),
  });
  try {
    const caps = pool.stats().capabilities;
    if (pool.stats().mode !== 'contained') {
      console.log(`python: full containment unavailable (${caps?.problems.join('; ')}); bench skipped`);
      return;
    }
    for (let i = 0; i < 50; i += 1) await pool.run({ form: 'main', source: SOURCE, inputs: { a: i, b: 1 } });
    const cpu = () => cpuMsWithChildren(pool.stats().pids);
    const sequentialFrom = cpu();
    const warm: number[] = [];
    for (let i = 0; i < 500; i += 1) {
      const t = performance.now();
      const r = await pool.run({ form: 'main', source: SOURCE, inputs: { a: i, b: 1 } });
      warm.push(performance.now() - t);
      if (!r.ok) throw new Error(`bench call failed: ${r.error.message}`);
    }
    const sequentialCpu = cpuPerCall(sequentialFrom, cpu(), warm.length);
    warm.sort((a, b) => a - b);
    // Callers as many as one organization may have queued (a burst beyond that is refused as busy, not run).
    const n = 2000;
    const callers = 32;
    let next = 0;
    const concurrentFrom = cpu();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: callers }, async () => {
        while (next < n) {
          const i = next++;
          const r = await pool.run({ form: 'main', source: SOURCE, inputs: { a: i, b: 1 } });
          if (!r.ok) throw new Error(`bench call failed: ${r.error.message}`);
        }
      }),
    );
    const perSecond = n / ((performance.now() - t0) / 1000);
    const concurrentCpu = cpuPerCall(concurrentFrom, cpu(), n);
    const s = pool.stats();
    console.log(`python sandbox: landlock ABI ${caps?.landlockAbi}, seccomp ${caps?.seccomp}, ${s.servers} servers`);
    console.log(
      `python cold start (python3 -I -S -c pass): p50 ${fmt(percentile(cold, 50))}, p99 ${fmt(percentile(cold, 99))}`,
    );
    console.log(
      `python warm call (bwrap+Landlock+seccomp+rlimits, sequential): p50 ${fmt(percentile(warm, 50))}, p95 ${fmt(percentile(warm, 95))}, p99 ${fmt(percentile(warm, 99))}, ${sequentialCpu}`,
    );
    console.log(
      `python throughput (${n} calls, ${callers} at a time): ${perSecond.toFixed(0)} calls/s, ${concurrentCpu}; load average ${loadavg()[0]?.toFixed(2)}`,
    );
  } finally {
    await pool.close();
  }
}
