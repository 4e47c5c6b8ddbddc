import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import type { CallbackDelivery } from './callback-receiver.js';
import { call, type CaseTarget, type CaseTraffic, type TrackedCase } from './chaos-traffic.js';

/**
 * What a chaos scenario ends with: every case its clients sent, checked
 * against the service (status, results), the callbacks received and
 * Temporal's own list of runs.
 */

/** A fault, and when the service was left to heal from it (the kill, or the part being back). */
export interface Fault {
  what: string;
  at: number;
}

export interface ScenarioResult {
  scenario: string;
  seconds: number;
  initiated: number;
  accepted: number;
  refusals: Map<string, number>;
  /** Executes without an answer (the connection broke) and, of those, the ones that ran. */
  noAnswer: number;
  noAnswerRan: number;
  /** Cases that must end: accepted, or unanswered but started. */
  expected: number;
  completed: number;
  failed: number;
  notTerminal: number;
  /** Cases told they were refused that ran all the same (the caller was told something untrue). */
  refusedButRan: number;
  callbacksDelivered: number;
  duplicateDeliveries: number;
  runTwice: number;
  wrongResults: number;
  lost: number;
  /** Error answers not in the contract's shape. */
  malformedRefusals: number;
  slowestAnswerMs: number;
  faults: Fault[];
  recoverySeconds: Array<number | undefined>;
}

const terminal = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);

interface CaseState {
  status: string;
  sum?: unknown;
}

async function caseState(target: CaseTarget, caseId: string): Promise<CaseState> {
  const results = await call(target, 'GET', `/api/v1/case/${caseId}/results`);
  if (results.status === 200) {
    const entries = results.body.results as Record<string, { value: unknown }> | undefined;
    return { status: String(results.body.status), sum: entries?.sum?.value };
  }
  const status = await call(target, 'GET', `/api/v1/case/${caseId}/status`);
  return { status: status.status === 200 ? String(status.body.status) : `unreadable (${status.status})` };
}

/** Waits (at most `waitMs`) until every case that must end has called back; unanswered executes are asked. */
export async function settle(traffic: CaseTraffic, target: CaseTarget, waitMs: number): Promise<void> {
  const deadline = performance.now() + waitMs;
  while (performance.now() < deadline) {
    const delivered = new Set(traffic.deliveries.map((d) => d.caseId));
    let open = traffic.cases.filter((c) => c.outcome === 'accepted' && !delivered.has(c.caseId)).length;
    for (const c of traffic.cases.filter((t) => t.outcome === 'no answer' && !delivered.has(t.caseId))) {
      if ((await caseState(target, c.caseId)).status !== 'PENDING') open++;
    }
    if (open === 0) return;
    await delay(1000);
  }
}

/** Temporal's case runs by workflow id (`case-<caseId>`), from its visibility store. */
async function caseRuns(temporalAddress: string): Promise<Map<string, number>> {
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const client = new Client({ connection, namespace: 'default' });
    const runs = new Map<string, number>();
    for await (const run of client.workflow.list({ query: `WorkflowType = 'caseRun'` })) {
      runs.set(run.workflowId, (runs.get(run.workflowId) ?? 0) + 1);
    }
    return runs;
  } finally {
    await connection.close();
  }
}

const sumOf = (delivery: CallbackDelivery) => delivery.results.sum?.value;

/**
 * Recovery from a fault: until a case executed after it has called back with its
 * result, and every case accepted before it has.
 */
function recovery(fault: Fault, cases: TrackedCase[], firstDelivery: Map<string, number>): number | undefined {
  const after = cases
    .filter((c) => c.sentAt > fault.at)
    .map((c) => firstDelivery.get(c.caseId))
    .filter((at): at is number => at !== undefined);
  if (after.length === 0) return undefined;
  const before = cases
    .filter((c) => c.sentAt < fault.at && c.outcome !== 'refused')
    .map((c) => firstDelivery.get(c.caseId) ?? Infinity);
  const healed = Math.max(Math.min(...after), ...before, fault.at);
  return Number.isFinite(healed) ? (healed - fault.at) / 1000 : undefined;
}

export async function verdict(
  scenario: string,
  startedAt: number,
  traffic: CaseTraffic,
  target: CaseTarget,
  temporalAddress: string,
  faults: Fault[],
): Promise<ScenarioResult> {
  const runs = await caseRuns(temporalAddress);
  const byCase = new Map<string, CallbackDelivery[]>();
  for (const d of traffic.deliveries) byCase.set(d.caseId, [...(byCase.get(d.caseId) ?? []), d]);
  const result: ScenarioResult = {
    scenario,
    seconds: (performance.now() - startedAt) / 1000,
    initiated:
      traffic.cases.length + [...traffic.refusals].reduce((n, [k, v]) => (k.startsWith('initiate') ? n + v : n), 0),
    accepted: 0,
    refusals: traffic.refusals,
    noAnswer: 0,
    noAnswerRan: 0,
    expected: 0,
    completed: 0,
    failed: 0,
    notTerminal: 0,
    refusedButRan: 0,
    callbacksDelivered: 0,
    duplicateDeliveries: 0,
    runTwice: 0,
    wrongResults: 0,
    lost: 0,
    malformedRefusals: traffic.malformedRefusals,
    slowestAnswerMs: traffic.slowestMs,
    faults,
    recoverySeconds: [],
  };
  const firstDelivery = new Map<string, number>();
  for (const c of traffic.cases) {
    const state = await caseState(target, c.caseId);
    const ran = state.status !== 'PENDING';
    if (c.outcome === 'accepted') result.accepted++;
    if (c.outcome === 'refused' && ran) {
      result.refusedButRan++;
      console.log(`chaos: case ${c.caseId} was refused (${c.refusal ?? ''}) but is ${state.status}`);
    }
    if (c.outcome === 'no answer') {
      result.noAnswer++;
      if (ran) result.noAnswerRan++;
    }
    if (c.outcome === 'refused' || !ran) continue;
    result.expected++;
    const deliveries = byCase.get(c.caseId) ?? [];
    const goodCallback = deliveries.some((d) => d.status === 'COMPLETED');
    if (state.status === 'COMPLETED') result.completed++;
    else if (terminal.has(state.status)) result.failed++;
    else result.notTerminal++;
    if (deliveries.length > 0) {
      result.callbacksDelivered++;
      firstDelivery.set(c.caseId, Math.min(...deliveries.map((d) => d.at)));
    }
    const distinct = new Set(deliveries.map((d) => d.webhookId)).size;
    result.duplicateDeliveries += deliveries.length - distinct;
    if (distinct > 1 || (runs.get(`case-${c.caseId}`) ?? 0) > 1) result.runTwice++;
    const expectedSum = c.a + c.b;
    const wrongCallback = deliveries.some((d) => !d.verified || d.status !== 'COMPLETED' || sumOf(d) !== expectedSum);
    if ((state.status === 'COMPLETED' && state.sum !== expectedSum) || wrongCallback) result.wrongResults++;
    if (state.status !== 'COMPLETED' || !goodCallback) result.lost++;
  }
  result.recoverySeconds = faults.map((f) => recovery(f, traffic.cases, firstDelivery));
  return result;
}

/** Every case that had to end ended COMPLETED with its sum and called back once per run; nobody was told untruths. */
export function passed(r: ScenarioResult): boolean {
  return (
    r.lost === 0 &&
    r.notTerminal === 0 &&
    r.failed === 0 &&
    r.runTwice === 0 &&
    r.wrongResults === 0 &&
    r.refusedButRan === 0 &&
    r.malformedRefusals === 0 &&
    r.callbacksDelivered === r.expected &&
    r.accepted > 0 &&
    r.recoverySeconds.every((s) => s !== undefined)
  );
}

export const tableHeader = [
  '| scenario | accepted | refused (by status) | completed | not terminal after the wait | callbacks delivered | duplicate deliveries | run twice | wrong results | time to recover | slowest answer | verdict |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
];

export function tableRow(r: ScenarioResult): string {
  const refusals = [...r.refusals].map(([what, n]) => `${n} ${what}`);
  if (r.malformedRefusals > 0) refusals.push(`${r.malformedRefusals} NOT in the contract's error shape`);
  if (r.noAnswer > 0) refusals.push(`${r.noAnswer} no answer (${r.noAnswerRan} of them ran)`);
  const recoveries = r.faults.map((f, i) => {
    const s = r.recoverySeconds[i];
    return `${f.what}: ${s === undefined ? 'not recovered' : `${s.toFixed(1)} s`}`;
  });
  const accepted =
    r.expected > r.accepted ? `${r.accepted} (+${r.expected - r.accepted} unanswered that ran)` : r.accepted;
  return `| ${r.scenario} | ${accepted} | ${refusals.join(', ') || '0'} | ${r.completed}/${r.expected}${r.failed ? ` (${r.failed} failed)` : ''} | ${r.notTerminal} | ${r.callbacksDelivered}/${r.expected} | ${r.duplicateDeliveries} | ${r.runTwice} | ${r.wrongResults}${r.refusedButRan ? ` (+${r.refusedButRan} refused but ran)` : ''} | ${recoveries.join('; ')} | ${(r.slowestAnswerMs / 1000).toFixed(1)} s | ${passed(r) ? 'pass' : 'FAIL'} |`;
}
