import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { CallbackDelivery } from './callback-receiver.js';

/**
 * The chaos suite's clients: cases flowing from a few concurrent callers
 * (initiate, then execute `a + b` with a callbackUrl), each answer recorded,
 * whatever the service is going through.
 */
export interface CaseTarget {
  baseUrl: string;
  key: string;
  workflowId: string;
}

export interface TrafficOptions {
  clients: number;
  /** Pause between two cases of one client. */
  paceMs: number;
}

/** What the caller was told at execute: accepted (202), refused (an error status or no connection), or nothing. */
export type ExecuteOutcome = 'accepted' | 'refused' | 'no answer';

export interface TrackedCase {
  caseId: string;
  a: number;
  b: number;
  /** performance.now() when the execute was sent. */
  sentAt: number;
  outcome: ExecuteOutcome;
  /** What a refusal said (its status and message). */
  refusal?: string;
}

/** A bounded request: an unanswered one ends after this long as "no answer". */
const REQUEST_TIMEOUT_MS = 30_000;

type Answer =
  { status: number; body: Record<string, unknown>; ms: number } | { status: 'connection refused' | 'no answer' };

/** An error answer in the contract's shape (statusCode, errorCode, message), and a 503's Retry-After. */
function wellFormedRefusal(answer: Answer): boolean {
  if (typeof answer.status !== 'number') return true;
  const { statusCode, errorCode, message } = answer.body;
  return statusCode === answer.status && typeof errorCode === 'string' && typeof message === 'string';
}

/** What a request to the service got: its status and JSON body, or why there was none. */
export async function call(target: CaseTarget, method: string, urlPath: string, body?: unknown): Promise<Answer> {
  const started = performance.now();
  try {
    const r = await fetch(`${target.baseUrl}${urlPath}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-service-key': target.key },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await r.text();
    return {
      status: r.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      ms: performance.now() - started,
    };
  } catch (err) {
    // Refused before anything was sent: certainly not accepted. Anything else may have reached the service.
    const code = (err as { cause?: { code?: string } }).cause?.code;
    return { status: code === 'ECONNREFUSED' ? 'connection refused' : 'no answer' };
  }
}

export class CaseTraffic {
  readonly cases: TrackedCase[] = [];
  /** Refusals by what was refused and how: `execute 503`, `initiate connection refused`, … */
  readonly refusals = new Map<string, number>();
  readonly deliveries: CallbackDelivery[] = [];
  /** The slowest answer the clients got (ms), and error answers not in the contract's shape. */
  slowestMs = 0;
  malformedRefusals = 0;
  private next = 0;
  private running = false;
  private clients: Array<Promise<void>> = [];

  private callbackUrl = '';

  constructor(
    private readonly target: CaseTarget,
    private readonly options: TrafficOptions,
  ) {}

  /** For the callback receiver. */
  readonly record = (delivery: CallbackDelivery): void => {
    this.deliveries.push(delivery);
  };

  start(callbackUrl: string): void {
    this.callbackUrl = callbackUrl;
    this.running = true;
    this.clients = Array.from({ length: this.options.clients }, () => this.client());
  }

  /** Sends no new case and waits for the ones being sent. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.clients);
  }

  /** Cases accepted whose callback has not arrived yet. */
  inFlight(): number {
    const delivered = new Set(this.deliveries.map((d) => d.caseId));
    return this.cases.filter((c) => c.outcome === 'accepted' && !delivered.has(c.caseId)).length;
  }

  private refused(what: string, answer: Answer): void {
    this.refusals.set(what, (this.refusals.get(what) ?? 0) + 1);
    if (!wellFormedRefusal(answer)) this.malformedRefusals++;
  }

  private answered(answer: Answer): Answer {
    if ('ms' in answer) this.slowestMs = Math.max(this.slowestMs, answer.ms);
    return answer;
  }

  private async client(): Promise<void> {
    while (this.running) {
      await this.oneCase();
      await delay(this.options.paceMs);
    }
  }

  private async oneCase(): Promise<void> {
    this.next += 1;
    const a = this.next;
    const b = Math.floor(Math.random() * 1000);
    const initiated = this.answered(
      await call(this.target, 'POST', '/api/v1/case', { workflowId: this.target.workflowId }),
    );
    if (initiated.status !== 201 || !('body' in initiated)) {
      this.refused(`initiate ${initiated.status}`, initiated);
      return;
    }
    const caseId = String(initiated.body.caseId);
    const sentAt = performance.now();
    const executed = this.answered(
      await call(this.target, 'POST', `/api/v1/case/${caseId}/execute`, {
        inputs: { a, b },
        callbackUrl: this.callbackUrl,
      }),
    );
    let outcome: ExecuteOutcome = 'refused';
    let refusal: string | undefined;
    if (executed.status === 202) outcome = 'accepted';
    else if (executed.status === 'no answer') outcome = 'no answer';
    else {
      this.refused(`execute ${executed.status}`, executed);
      refusal = 'body' in executed ? `${executed.status} ${String(executed.body.message)}` : executed.status;
    }
    this.cases.push({ caseId, a, b, sentAt, outcome, refusal });
  }
}
