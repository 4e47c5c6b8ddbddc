import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/net/free-port.js';
import { pythonAddGraph } from './bench-graph.js';
import type { LevelResult } from './bench-e2e-load.js';

/**
 * `npm run bench -- e2e`: caseflow as a webhook receiver sees it. Starts the
 * service exactly as `npm start` does (own data dir, embedded Temporal dev
 * server), drives it from a separate load process over HTTP at each
 * concurrency (BENCH_E2E_LEVELS, default "1:100,8:400,32:800"), and reports
 * initiate → signed callback received, plus CPU per case by process and
 * thread group and the process tree's RSS, read from /proc.
 * BENCH_E2E_PROFILE_DIR=dir writes a V8 CPU profile of the service there.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const TICK_MS = 10; // USER_HZ is 100 on Linux.

interface ThreadSample {
  group: string;
  ticks: number;
}

/** Every process under `root` (inclusive), from /proc's parent links. */
function tree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited while we looked
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(parents.get(out[i] ?? -1) ?? []));
  return out;
}

function comm(pathName: string): string {
  return readFileSync(pathName, 'utf8').trim();
}

/** Which part of the system a thread is: by process first, then by thread name in the service's Node process. */
function groupOf(processName: string, threadName: string, isService: boolean): string {
  if (!isService) {
    if (processName.startsWith('temporal')) return 'temporal server';
    if (processName.startsWith('python') || processName === 'bwrap') return 'python';
    return `other (${processName})`;
  }
  if (threadName === 'node' || threadName === 'MainThread') return 'node main thread (API + activities)';
  if (/^V8 |DefaultWorker|GC/i.test(threadName)) return 'node V8 helpers (GC, compiler)';
  if (/tokio|temporal|core/i.test(threadName)) return 'temporal core SDK (Rust)';
  if (/libuv|uv/i.test(threadName)) return 'node libuv pool';
  return `node thread: ${threadName}`;
}

function sample(root: number): { threads: ThreadSample[]; rssKb: number; rssByProcess: Map<string, number> } {
  const threads: ThreadSample[] = [];
  const rssByProcess = new Map<string, number>();
  let rssKb = 0;
  for (const pid of tree(root)) {
    try {
      const processName = comm(`/proc/${pid}/comm`);
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      rssKb += rss;
      const group = pid === root ? 'caseflow (node)' : groupOf(processName, '', false);
      rssByProcess.set(group, (rssByProcess.get(group) ?? 0) + rss);
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
        const ticks = Number(stat[11]) + Number(stat[12]);
        threads.push({ group: groupOf(processName, comm(`/proc/${pid}/task/${tid}/comm`), pid === root), ticks });
      }
    } catch {
      // exited while we looked
    }
  }
  return { threads, rssKb, rssByProcess };
}

function cpuByGroup(before: ThreadSample[], after: ThreadSample[]): Map<string, number> {
  const sum = (list: ThreadSample[]) =>
    list.reduce((m, t) => m.set(t.group, (m.get(t.group) ?? 0) + t.ticks), new Map<string, number>());
  const [b, a] = [sum(before), sum(after)];
  return new Map([...a].map(([group, ticks]) => [group, (ticks - (b.get(group) ?? 0)) * TICK_MS]));
}

async function waitReady(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the service did not become ready in 120 s');
}

function parseLevels(spec: string): Array<{ concurrency: number; cases: number }> {
  return spec.split(',').map((part) => {
    const [concurrency, cases] = part.split(':').map(Number);
    if (!concurrency || !cases) throw new Error(`BENCH_E2E_LEVELS: "${part}" is not concurrency:cases`);
    return { concurrency, cases };
  });
}

export async function benchE2e(): Promise<void> {
  const levels = parseLevels(process.env.BENCH_E2E_LEVELS ?? '1:100,8:400,32:800');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-bench-e2e-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const profileDir = process.env.BENCH_E2E_PROFILE_DIR;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const service = spawn(process.execPath, [...profile, path.join(here, '..', 'src', 'cli', 'main.js'), 'serve'], {
    env: {
      ...process.env,
      CASEFLOW_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_DEV_UI_PORT: String(await freePort()),
      // The receiver is on loopback; a real one would be public.
      CASEFLOW_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const keyLine = new Promise<string>((resolve) => {
    createInterface({ input: service.stdout }).on('line', (line) => {
      const m = /CASEFLOW_API_KEY=(\S+)/.exec(line);
      if (m?.[1]) resolve(m[1]);
    });
  });
  try {
    await waitReady(baseUrl, service);
    const key = await keyLine;
    const call = async (method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(`${baseUrl}${urlPath}`, {
        method,
        headers: { 'content-type': 'application/json', 'x-service-key': key, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await r.json()) as Record<string, unknown>;
      if (r.status >= 300) throw new Error(`${method} ${urlPath} → ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    const me = (await call('GET', '/api/v1/me')) as { workspaces: Array<{ id: string }> };
    const workspaceId = me.workspaces[0]?.id ?? '';
    const wf = (await call(
      'POST',
      '/api/v1/workflow',
      { name: 'bench-e2e', activeStatus: 'active', ...pythonAddGraph() },
      { 'x-workspace-id': workspaceId },
    )) as { workflowId: string };
    const { secret } = (await call('GET', `/api/v1/workspace/${workspaceId}/webhook-secret`)) as { secret: string };

    await new Promise((r) => setTimeout(r, 3000));
    const servicePid = service.pid;
    if (servicePid === undefined) throw new Error('the service has no pid');
    const idle = sample(servicePid);
    const byProcess = [...idle.rssByProcess].map(([group, kb]) => `${group} ${(kb / 1024).toFixed(0)} MB`).join(', ');
    console.log(
      `e2e: ${os.availableParallelism()} CPUs; idle RSS of the service's process tree ${(idle.rssKb / 1024).toFixed(0)} MB (${byProcess})`,
    );

    const load = spawn(process.execPath, [path.join(here, 'bench-e2e-load.js')], {
      env: {
        ...process.env,
        BENCH_E2E_JOB: JSON.stringify({ baseUrl, key, workflowId: wf.workflowId, secret, levels }),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const loadExit = new Promise<number | null>((resolve) => load.once('exit', resolve));
    let before = idle.threads;
    let peakRssKb = idle.rssKb;
    const rssTimer = setInterval(() => (peakRssKb = Math.max(peakRssKb, sample(servicePid).rssKb)), 500);
    for await (const line of createInterface({ input: load.stdout })) {
      const message = JSON.parse(line) as { event: 'start' } | { event: 'result'; result: LevelResult };
      if (message.event === 'start') {
        before = sample(servicePid).threads;
        continue;
      }
      const r = message.result;
      const cpu = cpuByGroup(before, sample(servicePid).threads);
      const total = [...cpu.values()].reduce((a, b) => a + b, 0);
      console.log(
        `e2e: concurrency ${String(r.concurrency).padStart(2)}: ${r.casesPerSecond.toFixed(1)} cases/s over ${r.cases} cases; initiate → callback p50 ${r.p50.toFixed(0)} ms  p95 ${r.p95.toFixed(0)} ms  p99 ${r.p99.toFixed(0)} ms; CPU ${(total / r.cases).toFixed(1)} ms/case`,
      );
      for (const [group, ms] of [...cpu].filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1])) {
        console.log(`e2e:     ${(ms / r.cases).toFixed(2).padStart(7)} ms/case  ${group}`);
      }
      if (r.badSignatures > 0) console.log(`e2e: WARNING ${r.badSignatures} callbacks failed signature verification`);
      load.stdin.write('\n');
    }
    clearInterval(rssTimer);
    const code = await loadExit;
    if (code !== 0) throw new Error(`the load process exited with ${code}`);
    console.log(`e2e: peak RSS of the service's process tree ${(peakRssKb / 1024).toFixed(0)} MB`);
  } finally {
    service.kill('SIGTERM');
    await new Promise((resolve) => service.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
