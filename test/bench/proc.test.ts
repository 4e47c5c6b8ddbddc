import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import { cpuByGroup, sample, type Root } from '../../scripts/bench-proc.js';

let child: ReturnType<typeof spawn> | undefined;
afterEach(() => {
  child?.kill();
  child = undefined;
});

/** A Node process whose worker thread spins for `ms` while its main thread sleeps; resolves once the spin began. */
async function spinningWorker(ms: number): Promise<number> {
  const worker = `const end = Date.now() + ${ms}; while (Date.now() < end);`;
  const main = `const { Worker } = require('node:worker_threads');
new Worker(${JSON.stringify(worker)}, { eval: true }).on('online', () => console.log('spinning'));
setTimeout(() => {}, ${ms + 5000});`;
  const proc = spawn(process.execPath, ['-e', main], { stdio: ['ignore', 'pipe', 'inherit'] });
  child = proc;
  if (proc.pid === undefined) throw new Error('the spinning process did not start');
  await once(proc.stdout, 'data');
  return proc.pid;
}

it("counts a caseflow process's worker threads (Node names them `node` too) apart from its main thread", async () => {
  const pid = await spinningWorker(600);
  const root: Root = { pid, label: 'svc', kind: 'caseflow' };
  const before = sample([root]).threads;
  await new Promise((resolve) => setTimeout(resolve, 500));
  const cpu = cpuByGroup(before, sample([root]).threads);

  // A loaded machine gives the spinning thread only part of the 500 ms: what matters is which row its time lands in.
  const workers = cpu.get('svc: node worker threads (workflows)') ?? 0;
  expect(workers).toBeGreaterThanOrEqual(50);
  expect(cpu.get('svc: node main thread (API + activities)') ?? 0).toBeLessThan(workers / 4);
});
