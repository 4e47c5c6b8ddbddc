import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { signedHeaders } from '../src/callbacks/signing.js';

/**
 * The sender side of the `caseflow-hook` bench subject: another system's webhook POSTing a signed
 * Standard Webhooks delivery to a sync hook of the benches' workflow (input → Python `a + b` → output)
 * and reading the case's results from the answer, as n8n's webhook → respond is read.
 */
export interface SyncHookTarget {
  url: string;
  secret: string;
}

/** Throws unless the answer is the sync 200 of a COMPLETED case whose `sum` result is `expected`. */
export function checkSumAnswer(status: number, answer: unknown, expected: number): void {
  const body = answer as { status?: unknown; results?: { sum?: { value?: unknown } } } | null;
  const sum = body?.results?.sum?.value;
  if (status !== 200 || body?.status !== 'COMPLETED' || sum !== expected) {
    throw new Error(`the sync hook answered ${status} ${JSON.stringify(answer)} where sum ${expected} was due`);
  }
}

/** One delivery of `{ a, b: 1 }`, signed with a fresh webhook-id: milliseconds from the POST to the checked answer. */
export async function deliverSum(target: SyncHookTarget, a: number): Promise<number> {
  const body = JSON.stringify({ a, b: 1 });
  const headers = signedHeaders([target.secret], `msg_${randomUUID()}`, Math.floor(Date.now() / 1000), body);
  const started = performance.now();
  const response = await fetch(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const answer: unknown = await response.json();
  const ms = performance.now() - started;
  checkSumAnswer(response.status, answer, a + 1);
  return ms;
}
