import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import { cpuByGroup, exitedThreadsGroup, sample, type Root } from '../../scripts/bench-proc.js';

let child: ReturnType<typeof spawn> | undefined;
afterEach(() => {
  child?.kill();
  child = undefined;
});

/** A Node process running `main`; resolves with its pid once it printed a line. */
async function nodeProcess(main: string): Promise<{ pid: number; lines: NodeJS.ReadableStream }> {
  const proc = spawn(process.execPath, ['-e', main], { stdio: ['ignore', 'pipe', 'inherit'] });
  child = proc;
  if (proc.pid === undefined) throw new Error('the process did not start');
  await once(proc.stdout, 'data');
  return { pid: proc.pid, lines: proc.stdout };
}

const spin = (ms: number) => JSON.stringify(`const end = Date.now() + ${ms}; while (Date.now() < end);`);

/** A Node process whose worker thread spins for `ms` while its main thread sleeps; resolves once the spin began. */
async function spinningWorker(ms: number): Promise<number> {
  const main = `const { Worker } = require('node:worker_threads');
new Worker(${spin(ms)}, { eval: true }).on('online', () => console.log('spinning'));
setTimeout(() => {}, ${ms + 5000});`;
  return (await nodeProcess(main)).pid;
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

it("counts the CPU of a caseflow process's threads that ended between two samples in a row of their own", async () => {
  // The worker starts after the first sample and ends before the second: no live thread holds its time then.
  const main = `const { Worker } = require('node:worker_threads');
console.log('ready');
setTimeout(() => new Worker(${spin(400)}, { eval: true }).on('exit', () => console.log('ended')), 200);
setTimeout(() => {}, 10000);`;
  const { pid, lines } = await nodeProcess(main);
  const root: Root = { pid, label: 'svc', kind: 'caseflow' };
  const before = sample([root]).threads;
  await once(lines, 'data');
  const cpu = cpuByGroup(before, sample([root]).threads);

  const exited = cpu.get(`svc: ${exitedThreadsGroup}`) ?? 0;
  expect(exited).toBeGreaterThanOrEqual(50);
  expect(cpu.get('svc: node worker threads (workflows)') ?? 0).toBe(0);
});
