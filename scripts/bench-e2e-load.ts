import { performance } from 'node:perf_hooks';
import { startCallbackReceiver } from './callback-receiver.js';
import { percentile } from './bench-stats.js';
import { post } from './bench-http.js';
import { deliverSum } from './hook-sender.js';

/**
 * The load side of `npm run bench -- e2e`, run as its own process so its CPU
 * is not the subject's. For caseflow: a webhook receiver plus clients that
 * initiate and execute cases over HTTP and time each one until its signed
 * callback arrives. For a plain webhook (n8n): clients that POST the same
 * inputs and time the response. For a sync hook (caseflow-hook): the same, each
 * POST signed (Standard Webhooks) and its answer's Python result checked. Reads its job from BENCH_E2E_JOB, writes one
 * JSON line per level and waits for a line on stdin before the next.
 */
export interface Level {
  concurrency: number;
  cases: number;
}

export type LoadJob = (
  | { kind: 'case'; baseUrl: string; key: string; workflowId: string; secret: string; levels: Level[] }
  | { kind: 'webhook'; url: string; levels: Level[] }
  | { kind: 'hook'; url: string; secret: string; levels: Level[] }
) & { prefill?: number };

/** A case with no callback after this is reported with what the service says of it: a late callback or a lost one. */
const LATE_AFTER_MS = 120_000;
/** A case that never calls back fails the bench instead of hanging it; by then its delivery has been retried 6 times more. */
const CASE_TIMEOUT_MS = 600_000;

export interface LevelResult {
  concurrency: number;
  cases: number;
  seconds: number;
  casesPerSecond: number;
  p50: number;
  p95: number;
  p99: number;
  badSignatures: number;
}

const job = JSON.parse(process.env.BENCH_E2E_JOB ?? '') as LoadJob;
const waiting = new Map<string, { started: number; done: (ms: number) => void; fail: (err: Error) => void }>();
/** Cases reported late, so their callback's arrival says how late. */
const late = new Set<string>();
let badSignatures = 0;

const receiver = await startCallbackReceiver(job.kind === 'case' ? job.secret : '', (delivery) => {
  if (!delivery.verified) badSignatures += 1;
  const entry = waiting.get(delivery.caseId);
  if (!entry) return;
  waiting.delete(delivery.caseId);
  if (late.delete(delivery.caseId))
    process.stderr.write(
      `case ${delivery.caseId}: callback arrived ${Math.round((delivery.at - entry.started) / 1000)} s after the start\n`,
    );
  if (delivery.status === 'COMPLETED') entry.done(delivery.at - entry.started);
  else entry.fail(new Error(`case ${delivery.caseId} ended ${delivery.status}`));
});
const callbackUrl = receiver.url;

/** What the service says of a case still without its callback: its status, its nodes' audit and its deliveries' attempts. */
async function reportLate(job: Extract<LoadJob, { kind: 'case' }>, caseId: string): Promise<void> {
  late.add(caseId);
  const read = async (path: string) =>
    (await fetch(`${job.baseUrl}/api/v1/case/${caseId}${path}`, { headers: { 'x-service-key': job.key } })).text();
  const [status, audit, callbacks] = await Promise.all([read('/status'), read('/audit'), read('/callbacks')]).catch(
    (err: unknown) => [`unreadable (${String(err)})`, '', ''],
  );
  process.stderr.write(
    `case ${caseId}: no callback after ${LATE_AFTER_MS / 1000} s; status ${status}; audit ${audit}; callbacks ${callbacks}\n`,
  );
}

/** One case as its client sees it: initiate, execute, signed callback received (or one webhook's answer). */
async function oneCase(i: number): Promise<number> {
  if (job.kind === 'webhook') {
    const started = performance.now();
    const { sum } = await post(job.url, { a: i, b: 1 });
    if (sum !== i + 1) throw new Error(`the webhook answered sum ${String(sum)} for ${i} + 1`);
    return performance.now() - started;
  }
  if (job.kind === 'hook') return deliverSum(job, i);
  const headers = { 'x-service-key': job.key };
  const started = performance.now();
  const { caseId } = (await post(`${job.baseUrl}/api/v1/case`, { workflowId: job.workflowId }, headers)) as {
    caseId: string;
  };
  const delivered = new Promise<number>((done, fail) => waiting.set(caseId, { started, done, fail }));
  const lateTimer = setTimeout(() => void reportLate(job, caseId), LATE_AFTER_MS);
  const timeout = setTimeout(
    () => waiting.get(caseId)?.fail(new Error(`case ${caseId}: no callback in ${CASE_TIMEOUT_MS} ms`)),
    CASE_TIMEOUT_MS,
  );
  await post(`${job.baseUrl}/api/v1/case/${caseId}/execute`, { inputs: { a: i, b: 1 }, callbackUrl }, headers);
  return delivered.finally(() => {
    clearTimeout(lateTimer);
    clearTimeout(timeout);
  });
}

async function level(concurrency: number, cases: number): Promise<LevelResult> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < cases) {
        next += 1;
        latencies.push(await oneCase(next));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    concurrency,
    cases,
    seconds,
    casesPerSecond: cases / seconds,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    badSignatures,
  };
}

// Steady state: the stores already hold this many cases (run at c=32, not measured) before the first level.
if (job.prefill) await level(32, job.prefill);
for (const [i, { concurrency, cases }] of job.levels.entries()) {
  // The driver samples CPU between these lines; warm-up cases are not counted.
  await level(concurrency, Math.min(cases, concurrency * 2));
  process.stdout.write(`${JSON.stringify({ event: 'start', concurrency })}\n`);
  const result = await level(concurrency, cases);
  process.stdout.write(`${JSON.stringify({ event: 'result', result })}\n`);
  if (i < job.levels.length - 1) await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
}
// Stdin and the receiver's keep-alive sockets would hold this process open; stdout to a pipe is synchronous on Linux.
process.exit(0);
