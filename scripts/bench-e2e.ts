import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describeGrowth, freeWorkflowTaskSlots, readCounters, type Counters } from './bench-counters.js';
import type { Level, LevelResult } from './bench-e2e-load.js';
import type { FillOptions } from './bench-fill.js';
import {
  cpuByArea,
  mainThreadProfiles,
  monotonicUs,
  workerThreadProfiles,
  workflowThreadByArea,
} from './bench-profile.js';
import { cpuByGroup, megabytes, sample, type TreeSample } from './bench-proc.js';
import {
  hookJobOf,
  n8nInstallHint,
  n8nInstalled,
  startCaseflow,
  startN8n,
  startSplit,
  type Subject,
} from './bench-subjects.js';

/**
 * `npm run bench -- e2e`: caseflow as a webhook receiver sees it, driven
 * from a separate load process over HTTP at each concurrency
 * (BENCH_E2E_LEVELS, default "1:100,8:400,32:800"): initiate → signed
 * callback received, CPU per case by process and thread group, the process
 * tree's idle RSS (3 s and BENCH_E2E_START_SETTLE_S, default 15, after start,
 * and BENCH_E2E_SETTLE_S, default 30, after the load) and peak RSS, read
 * from /proc.
 *
 * BENCH_E2E_SUBJECTS (default "caseflow", or "split" with
 * BENCH_E2E_TOPOLOGY=split) lists what to measure, one after the other:
 * `caseflow`, `caseflow-hook`, `split`, `n8n`, `n8n-queue`, and `caseflow@<dir>` / `split@<dir>` for the
 * build in another checkout's dist (an A/B in the same minutes). `caseflow-hook` is `caseflow` driven
 * as n8n is: one signed POST to a sync webhook trigger per case, timed to its 200 with the results.
 * BENCH_E2E_ROUNDS=n repeats the list, alternating. The end is one table,
 * each row's ratio to the first subject of its round.
 * `caseflow+<name>` (and `caseflow-hook+<name>`) runs `caseflow` with the variables of BENCH_E2E_ENV_<name>
 * ("K=V K2=V2") added to its environment: a configuration lever A/B'd on one
 * build; BENCH_E2E_PREFILL=n among them runs n cases (c=32, not measured)
 * before the first level, for steady state on filled stores; BENCH_E2E_FILL=n
 * starts it on stores filled with n cases of the last 24 h (bench-fill.ts), and BENCH_E2E_FILL_DELETING=r
 * with it gives them their retention timers, r falling due per second from the fill's end.
 * `npm run bench -- side-by-side` is caseflow, split, n8n and n8n-queue (n8n when installed).
 * BENCH_E2E_PROFILE_DIR=dir writes V8 CPU profiles of the caseflow processes.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
/** How long a `caseflow-hook` delivery waits for its case (the hook's syncTimeoutMs); a 202 after it fails the bench. */
const SYNC_HOOK_WAIT_MS = 120_000;

interface Row {
  round: number;
  subject: string;
  result: LevelResult;
  cpuMsPerCase: number;
  /** The Temporal server's share of it, and the service's own processes' (all but the server and Python). */
  serverMsPerCase: number;
  serviceMsPerCase: number;
  load: number;
  /** The level's time window on the monotonic clock, for the CPU profiles. */
  fromUs: number;
  toUs: number;
}

function parseLevels(spec: string): Level[] {
  return spec.split(',').map((part) => {
    const [concurrency, cases] = part.split(':').map(Number);
    if (!concurrency || !cases) throw new Error(`BENCH_E2E_LEVELS: "${part}" is not concurrency:cases`);
    return { concurrency, cases };
  });
}

/** A `caseflow+<name>` variant's environment (BENCH_E2E_ENV_<name>), its prefill and fill taken out. */
function variantEnv(variant: string | undefined): {
  env: Record<string, string>;
  prefill?: number;
  fill?: FillOptions;
} {
  if (!variant) return { env: {} };
  const spec = process.env[`BENCH_E2E_ENV_${variant}`];
  if (spec === undefined) throw new Error(`BENCH_E2E_SUBJECTS: caseflow+${variant} needs BENCH_E2E_ENV_${variant}`);
  const env = Object.fromEntries(
    spec
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  const { BENCH_E2E_PREFILL: prefill, BENCH_E2E_FILL: fill, BENCH_E2E_FILL_DELETING: deleting, ...rest } = env;
  if (deleting && !fill) throw new Error(`BENCH_E2E_ENV_${variant}: BENCH_E2E_FILL_DELETING needs BENCH_E2E_FILL`);
  return {
    env: rest,
    ...(prefill ? { prefill: Number(prefill) } : {}),
    ...(fill ? { fill: { cases: Number(fill), ...(deleting ? { deletingPerSecond: Number(deleting) } : {}) } } : {}),
  };
}

function starter(spec: string): () => Promise<Subject> {
  const [kind, dir] = spec.split('@');
  const [name, variant] = (kind ?? '').split('+');
  const root = dir ? path.resolve(dir, 'dist') : undefined;
  const { env, prefill, fill } = variantEnv(variant);
  const named = (start: () => Promise<Subject>) => async () => {
    const subject = await start();
    return { ...subject, name: spec, job: (levels: Level[]) => ({ ...subject.job(levels), prefill }) };
  };
  if (name === 'caseflow') return named(() => startCaseflow(root, env, fill));
  if (name === 'caseflow-hook') {
    // The deliveries may wait as long as the case subject waits for a callback before calling it late.
    const hookEnv = { CASEFLOW_HOOK_MAX_SYNC_TIMEOUT_MS: String(SYNC_HOOK_WAIT_MS), ...env };
    return named(() =>
      startCaseflow(root, hookEnv, fill, undefined, (baseUrl, key) => hookJobOf(baseUrl, key, SYNC_HOOK_WAIT_MS)),
    );
  }
  if (name === 'split') return named(() => startSplit(root));
  if (name === 'n8n') return () => startN8n();
  if (name === 'n8n-queue') return () => startN8n('queue');
  throw new Error(
    `BENCH_E2E_SUBJECTS: unknown subject "${spec}" (caseflow, caseflow-hook, split, n8n, n8n-queue, caseflow@<dir>, split@<dir>)`,
  );
}

const loadAverage = () => os.loadavg()[0] ?? 0;

/** One subject through every level: prints as it goes, returns a row per level. */
async function measure(subject: Subject, levels: Level[], round: number): Promise<Row[]> {
  // Right after start the heaps still hold the start's garbage; idle is once the process has settled.
  await new Promise((r) => setTimeout(r, 3000));
  printIdleRss(subject, 'RSS 3 s after start');
  const startSettleSeconds = Number(process.env.BENCH_E2E_START_SETTLE_S ?? 15);
  await new Promise((r) => setTimeout(r, Math.max(0, startSettleSeconds - 3) * 1000));
  const idle = printIdleRss(subject, `idle RSS ${startSettleSeconds} s after start`);

  const load = spawn(process.execPath, [path.join(here, 'bench-e2e-load.js')], {
    env: { ...process.env, BENCH_E2E_JOB: JSON.stringify(subject.job(levels)) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const loadExit = new Promise<number | null>((resolve) => load.once('exit', resolve));
  let before = idle.threads;
  let peakRssKb = idle.rssKb;
  const rssTimer = setInterval(() => (peakRssKb = Math.max(peakRssKb, sample(subject.roots).rssKb)), 500);
  const rows: Row[] = [];
  let fromUs = monotonicUs();
  const counterUrls = [subject.metricsUrl, subject.engineMetricsUrl];
  let countersBefore: Counters = new Map();
  // An eager start falls back when no workflow-task slot is free: the fewest free during the level says whether that was why.
  let fewestFreeSlots: number | undefined;
  const slotTimer = setInterval(() => {
    if (!subject.workerMetricsUrl) return;
    void freeWorkflowTaskSlots(subject.workerMetricsUrl).then((free) => {
      if (free !== undefined) fewestFreeSlots = Math.min(free, fewestFreeSlots ?? free);
    });
  }, 1000);
  for await (const line of createInterface({ input: load.stdout })) {
    const message = JSON.parse(line) as { event: 'start' } | { event: 'result'; result: LevelResult };
    if (message.event === 'start') {
      before = sample(subject.roots).threads;
      fromUs = monotonicUs();
      if (subject.metricsUrl) countersBefore = await readCounters(counterUrls);
      fewestFreeSlots = undefined;
      continue;
    }
    const r = message.result;
    const cpu = cpuByGroup(before, sample(subject.roots).threads);
    const total = [...cpu.values()].reduce((a, b) => a + b, 0);
    const server = cpu.get('temporal server') ?? 0;
    const row: Row = {
      round,
      subject: subject.name,
      result: r,
      cpuMsPerCase: total / r.cases,
      serverMsPerCase: server / r.cases,
      serviceMsPerCase: (total - server - (cpu.get('python') ?? 0)) / r.cases,
      load: loadAverage(),
      fromUs,
      toUs: monotonicUs(),
    };
    rows.push(row);
    console.log(
      `e2e [${subject.name}]: concurrency ${String(r.concurrency).padStart(2)}: ${r.casesPerSecond.toFixed(1)} cases/s over ${r.cases}; p50 ${r.p50.toFixed(0)} ms  p95 ${r.p95.toFixed(0)} ms  p99 ${r.p99.toFixed(0)} ms; CPU ${row.cpuMsPerCase.toFixed(1)} ms/case; load average ${row.load.toFixed(1)}`,
    );
    for (const [group, ms] of [...cpu].filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1])) {
      console.log(`e2e:     ${(ms / r.cases).toFixed(2).padStart(7)} ms/case  ${group}`);
    }
    if (subject.metricsUrl) {
      const grown = describeGrowth(countersBefore, await readCounters(counterUrls), r.cases);
      if (grown.length > 0)
        console.log(`e2e [${subject.name}]: counters over the level:\n${grown.map((l) => `e2e:   ${l}`).join('\n')}`);
    }
    if (fewestFreeSlots !== undefined)
      console.log(`e2e [${subject.name}]: fewest free workflow-task slots during the level: ${fewestFreeSlots}`);
    if (r.badSignatures > 0) console.log(`e2e: WARNING ${r.badSignatures} callbacks failed signature verification`);
    // The load process waits for this line between levels and exits after the last.
    if (rows.length < levels.length) load.stdin.write('\n');
  }
  clearInterval(rssTimer);
  clearInterval(slotTimer);
  const code = await loadExit;
  if (code !== 0) throw new Error(`the load process exited with ${code}`);
  console.log(`e2e [${subject.name}]: peak RSS ${megabytes(peakRssKb)}`);
  if (subject.metricsUrl) await printStarts(subject);
  const settleSeconds = Number(process.env.BENCH_E2E_SETTLE_S ?? 30);
  await new Promise((r) => setTimeout(r, settleSeconds * 1000));
  printIdleRss(subject, `idle RSS ${settleSeconds} s after the load`);
  return rows;
}

/** How the subject's case runs were started (eager, fallback), warm-up and prefill included. */
async function printStarts(subject: Subject): Promise<void> {
  const text = await fetch(subject.metricsUrl ?? '').then((r) => r.text());
  const starts = text.split('\n').filter((line) => line.startsWith('caseflow_case_run_starts_total'));
  console.log(
    `e2e [${subject.name}]: run starts ${starts.map((l) => l.replace(/^\S*\{start="(\w+)"\}/, '$1')).join(', ')}`,
  );
}

/**
 * With BENCH_E2E_PROFILE_DIR: what the main thread's CPU and the workflow thread's time went to, per level, from the
 * profiles the subject wrote on exit.
 */
function printProfileAreas(rows: Row[], startedMs: number): void {
  const dir = process.env.BENCH_E2E_PROFILE_DIR;
  if (!dir || rows.length === 0) return;
  const threads = [
    { what: 'Node main thread by area (CPU profile', files: mainThreadProfiles(dir, startedMs), byArea: cpuByArea },
    {
      what: 'workflow thread by area (profile: time while not idle, not CPU',
      files: workerThreadProfiles(dir, startedMs),
      byArea: workflowThreadByArea,
    },
  ];
  for (const row of rows) {
    for (const { what, files, byArea } of threads) {
      if (files.length === 0) continue;
      const areas = byArea(files, row.fromUs, row.toUs);
      console.log(
        `e2e [${row.subject}]: concurrency ${row.result.concurrency}, ${what}, monotonic µs ${row.fromUs}-${row.toUs}):`,
      );
      for (const [area, ms] of [...areas].sort((a, b) => b[1] - a[1])) {
        console.log(`e2e:     ${(ms / row.result.cases).toFixed(2).padStart(7)} ms/case  ${area}`);
      }
    }
  }
}

/** The tree's RSS now, in total and by process. */
function printIdleRss(subject: Subject, what: string): TreeSample {
  const idle = sample(subject.roots);
  const byProcess = [...idle.rssByProcess].map(([group, kb]) => `${group} ${megabytes(kb)}`).join(', ');
  console.log(`e2e [${subject.name}]: ${what} ${megabytes(idle.rssKb)} (${byProcess})`);
  return idle;
}

/** Every row, with its ratio to the same level of the first subject in its round. */
function printTable(rows: Row[]): void {
  console.log('\ne2e: side by side (ratios to the first subject of the same round)');
  console.log(
    '| round | subject | concurrency | cases/s | p50 / p95 ms | CPU ms/case | server / service ms | ratio cases/s | ratio p50 | ratio server / service CPU | load avg |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const base = rows.find((r) => r.round === row.round && r.result.concurrency === row.result.concurrency);
    const r = row.result;
    const ratio = (a: number, b: number | undefined) => (b ? `${(a / b).toFixed(2)}×` : '');
    console.log(
      `| ${row.round} | ${row.subject} | ${r.concurrency} | ${r.casesPerSecond.toFixed(1)} | ${r.p50.toFixed(0)} / ${r.p95.toFixed(0)} | ${row.cpuMsPerCase.toFixed(1)} | ${row.serverMsPerCase.toFixed(1)} / ${row.serviceMsPerCase.toFixed(1)} | ${ratio(r.casesPerSecond, base?.result.casesPerSecond)} | ${ratio(r.p50, base?.result.p50)} | ${ratio(row.serverMsPerCase, base?.serverMsPerCase)} / ${ratio(row.serviceMsPerCase, base?.serviceMsPerCase)} | ${row.load.toFixed(1)} |`,
    );
  }
}

async function run(wanted: string[]): Promise<void> {
  // n8n is installed by hand outside the repository: without it its subjects are left out, said once.
  const subjects = wanted.filter((spec) => n8nInstalled() || !spec.startsWith('n8n'));
  if (subjects.length < wanted.length) console.log(`e2e: n8n subjects skipped: ${n8nInstallHint}`);
  const levels = parseLevels(process.env.BENCH_E2E_LEVELS ?? '1:100,8:400,32:800');
  const rounds = Number(process.env.BENCH_E2E_ROUNDS ?? 1);
  console.log(`e2e: ${os.availableParallelism()} CPUs; subjects ${subjects.join(', ')}; ${rounds} round(s)`);
  const rows: Row[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const spec of subjects) {
      const startedMs = Date.now();
      const subject = await starter(spec)();
      const measured: Row[] = [];
      try {
        measured.push(...(await measure(subject, levels, round)));
      } finally {
        await subject.stop();
      }
      rows.push(...measured);
      printProfileAreas(measured, startedMs);
    }
  }
  if (subjects.length > 1 || rounds > 1) printTable(rows);
}

export async function benchE2e(): Promise<void> {
  const fallback = process.env.BENCH_E2E_TOPOLOGY === 'split' ? 'split' : 'caseflow';
  await run((process.env.BENCH_E2E_SUBJECTS ?? fallback).split(','));
}

/** caseflow (one process), caseflow split (api + two workers on Postgres), n8n and n8n in queue mode, back to back. */
export async function benchSideBySide(): Promise<void> {
  await run(['caseflow', 'split', 'n8n', 'n8n-queue']);
}
