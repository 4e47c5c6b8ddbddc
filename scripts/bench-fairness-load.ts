import { performance } from 'node:perf_hooks';
import { startCallbackReceiver } from './callback-receiver.js';
import { HttpRefusal, post } from './bench-http.js';
import { percentile } from './bench-stats.js';

/**
 * The load side of `npm run bench -- fairness`, its own process so its CPU is
 * not the service's. Organization B runs cases one at a time (initiate →
 * signed callback) alone, then while organization A submits a burst of cases
 * from `burstConcurrency` clients that do not wait for A's callbacks. Reads
 * its job from BENCH_FAIRNESS_JOB, writes one JSON line with the result.
 */
export interface TenantJob {
  baseUrl: string;
  key: string;
  workflowId: string;
  /** The workspace's webhook secret: each tenant has its own receiver verifying it. */
  secret: string;
}

export interface FairnessJob {
  a: TenantJob;
  b: TenantJob;
  burst: number;
  burstConcurrency: number;
  idleCases: number;
}

export interface Latencies {
  cases: number;
  p50: number;
  p95: number;
  /** Of that, initiate → execute answered (the API's share; the rest is the run and its callback). */
  submitP50: number;
  /** p50 ms of each stage of a case (read from its audit and delivery log after it ended). */
  stages: Record<Stage, number>;
}

/**
 * Where one of B's cases spent its time, one stage after the other: `submit` initiate → execute answered;
 * `toNode` → the Python node's code began (the run's start, its workflow task, the local activity's turn);
 * `node` the Python node (the pool's queue and the call); `toCallback` → the callback's first attempt began
 * (the end's write); `delivery` → the signed callback arrived.
 */
const stageNames = ['submit', 'toNode', 'node', 'toCallback', 'delivery'] as const;
type Stage = (typeof stageNames)[number];

export interface FairnessResult {
  /** B alone on an idle service. */
  idle: Latencies;
  /** B one at a time while A's burst was in the service. */
  during: Latencies;
  /** A's burst: until every one of its callbacks arrived. */
  burst: { cases: number; seconds: number; submitSeconds: number; notCompleted: number };
  badSignatures: number;
  /** Executes answered 503 and tried again after their Retry-After. */
  unavailable: number;
}

/**
 * A case whose callback never comes counts as not completed (its status is printed) instead of hanging the
 * bench; A's last ones wait for the whole burst, so this is long.
 */
const CASE_TIMEOUT_MS = 600_000;
const WARM_UP_CASES = 5;
const MAX_EXECUTE_ATTEMPTS = 10;

const job = JSON.parse(process.env.BENCH_FAIRNESS_JOB ?? '') as FairnessJob;
const waiting = new Map<string, (delivery: { at: number; status: string }) => void>();
let badSignatures = 0;
/** Executes answered 503 (engine unavailable) and tried again. */
let unavailable = 0;

async function receiverFor(tenant: TenantJob): Promise<string> {
  const receiver = await startCallbackReceiver(tenant.secret, (delivery) => {
    if (!delivery.verified) badSignatures += 1;
    waiting.get(delivery.caseId)?.(delivery);
    waiting.delete(delivery.caseId);
  });
  return receiver.url;
}

const callbackUrls = new Map<TenantJob, string>([
  [job.a, await receiverFor(job.a)],
  [job.b, await receiverFor(job.b)],
]);

/**
 * Initiates and executes one case of `tenant`; answers once it is submitted, with
 * the wait for its callback (ms from the initiate, and whether it COMPLETED).
 */
async function submit(
  tenant: TenantJob,
  i: number,
): Promise<{
  caseId: string;
  /** performance.now() at the initiate. */
  started: number;
  submitMs: number;
  delivered: Promise<{ ms: number; completed: boolean; arrivedAt: number }>;
}> {
  const headers = { 'x-service-key': tenant.key };
  const started = performance.now();
  const { caseId } = (await post(`${tenant.baseUrl}/api/v1/case`, { workflowId: tenant.workflowId }, headers)) as {
    caseId: string;
  };
  const delivered = new Promise<{ ms: number; completed: boolean; arrivedAt: number }>((resolve) => {
    const timeout = setTimeout(() => {
      waiting.delete(caseId);
      void getJson(tenant, `/api/v1/case/${caseId}/status`).then(
        (status) => console.error(`case ${caseId}: no callback in ${CASE_TIMEOUT_MS} ms: ${JSON.stringify(status)}`),
        (err: unknown) => console.error(`case ${caseId}: no callback in ${CASE_TIMEOUT_MS} ms (${String(err)})`),
      );
      resolve({ ms: CASE_TIMEOUT_MS, completed: false, arrivedAt: Number.NaN });
    }, CASE_TIMEOUT_MS);
    waiting.set(caseId, ({ at, status }) => {
      clearTimeout(timeout);
      resolve({ ms: at - started, completed: status === 'COMPLETED', arrivedAt: at });
    });
  });
  const callbackUrl = callbackUrls.get(tenant) ?? '';
  await executeRetrying(
    `${tenant.baseUrl}/api/v1/case/${caseId}/execute`,
    { inputs: { a: i, b: 1 }, callbackUrl },
    headers,
  );
  return { caseId, started, submitMs: performance.now() - started, delivered };
}

async function getJson(tenant: TenantJob, urlPath: string): Promise<unknown> {
  const r = await fetch(`${tenant.baseUrl}${urlPath}`, { headers: { 'x-service-key': tenant.key } });
  if (!r.ok) throw new Error(`GET ${urlPath} → ${r.status}`);
  return r.json();
}

interface Audit {
  audit: {
    nodes_execution_data: Record<
      string,
      { clock: string | null; started_at: string | null; finished_at: string | null }
    >;
  };
}
interface Deliveries {
  deliveries: Array<{ attempts: Array<{ startedAt: string }> }>;
}

/** A case's stages (ms), from its audit and delivery log; times of this process are performance.now(). */
async function stagesOf(
  tenant: TenantJob,
  caseId: string,
  times: { started: number; submitMs: number; arrivedAt: number },
): Promise<Record<Stage, number>> {
  const audit = (await getJson(tenant, `/api/v1/case/${caseId}/audit`)) as Audit;
  const deliveries = (await getJson(tenant, `/api/v1/case/${caseId}/callbacks`)) as Deliveries;
  const code = Object.values(audit.audit.nodes_execution_data).find((n) => n.clock === 'activity');
  const epoch = (iso: string | null | undefined) => Date.parse(iso ?? '') - performance.timeOrigin;
  const [nodeStart, nodeEnd] = [epoch(code?.started_at), epoch(code?.finished_at)];
  const attempt = epoch(deliveries.deliveries[0]?.attempts[0]?.startedAt);
  const executed = times.started + times.submitMs;
  return {
    submit: times.submitMs,
    toNode: nodeStart - executed,
    node: nodeEnd - nodeStart,
    toCallback: attempt - nodeEnd,
    delivery: times.arrivedAt - attempt,
  };
}

/**
 * Execute, again after its Retry-After while the service answers 503 (its engine did not answer in
 * time: the case stays PENDING and may be executed again), as a client following the contract does.
 */
async function executeRetrying(url: string, body: unknown, headers: Record<string, string>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await post(url, body, headers);
      return;
    } catch (err) {
      if (!(err instanceof HttpRefusal) || err.status !== 503 || attempt >= MAX_EXECUTE_ATTEMPTS) throw err;
      unavailable += 1;
      await new Promise((r) => setTimeout(r, (err.retryAfterSeconds ?? 1) * 1000));
    }
  }
}

/** B's cases one after the other while `more()` holds (at least `min`); their latencies. */
async function oneAtATime(min: number, more: () => boolean): Promise<Latencies> {
  const latencies: number[] = [];
  const submits: number[] = [];
  const stages: Array<Record<Stage, number>> = [];
  while (latencies.length < min || more()) {
    const { caseId, started, submitMs, delivered } = await submit(job.b, latencies.length);
    const { ms, completed, arrivedAt } = await delivered;
    if (!completed) throw new Error('a case of organization B did not complete');
    latencies.push(ms);
    submits.push(submitMs);
    stages.push(await stagesOf(job.b, caseId, { started, submitMs, arrivedAt }));
  }
  // A stage a case's records do not show yet (NaN: the callback's attempt is recorded once the receiver answered,
  // and with the worker in another process this read often comes first) is left out of its p50, where a NaN would
  // sort anywhere, and counted.
  for (const name of stageNames) {
    const missing = stages.filter((s) => !Number.isFinite(s[name])).length;
    if (missing > 0)
      console.error(`fairness: ${missing} of B's ${stages.length} cases show no ${name} in their records`);
  }
  const p50 = (values: number[]) =>
    percentile(
      values.filter(Number.isFinite).sort((x, y) => x - y),
      50,
    );
  return {
    cases: latencies.length,
    p50: p50(latencies),
    p95: percentile(
      [...latencies].sort((x, y) => x - y),
      95,
    ),
    submitP50: p50(submits),
    stages: Object.fromEntries(stageNames.map((name) => [name, p50(stages.map((s) => s[name]))])) as Record<
      Stage,
      number
    >,
  };
}

/** A's burst: every case submitted as fast as `burstConcurrency` clients can, callbacks awaited at the end. */
async function burst(): Promise<FairnessResult['burst']> {
  const started = performance.now();
  const callbacks: Array<Promise<{ completed: boolean }>> = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: job.burstConcurrency }, async () => {
      while (next < job.burst) {
        next += 1;
        callbacks.push((await submit(job.a, next)).delivered);
      }
    }),
  );
  const submitSeconds = (performance.now() - started) / 1000;
  const outcomes = await Promise.all(callbacks);
  return {
    cases: job.burst,
    seconds: (performance.now() - started) / 1000,
    submitSeconds,
    notCompleted: outcomes.filter((o) => !o.completed).length,
  };
}

for (const tenant of [job.a, job.b]) {
  for (let i = 0; i < WARM_UP_CASES; i++) await (await submit(tenant, i)).delivered;
}
const idle = await oneAtATime(job.idleCases, () => false);
let burstRunning = true;
const burstDone = burst().finally(() => (burstRunning = false));
// B starts once A has a backlog in the service, and runs until A's last callback.
await new Promise((r) => setTimeout(r, 1000));
const during = await oneAtATime(1, () => burstRunning);
const result: FairnessResult = {
  idle,
  during,
  burst: await burstDone,
  badSignatures,
  unavailable,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
// The receivers' keep-alive sockets would hold this process open; stdout to a pipe is synchronous on Linux.
process.exit(0);
