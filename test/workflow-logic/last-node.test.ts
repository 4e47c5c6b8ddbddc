import { setTimeout as delay } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  nodeFailedType,
  type CaseActivities,
  type EndCaseInput,
  type EndCaseResult,
  type LastNodeRequest,
  type LastNodeResult,
  type NodeFailureDetails,
  type RunNodeResponse,
} from '../../activities/cases.js';
import type { CallbackDeliveryInput } from '../../src/temporal/contracts/callback-delivery.js';
import { caseRunRevision } from '../../src/domain/case-run-changes.js';
import type { CaseRunInput, RecordedEnd } from '../../src/domain/cases.js';
import { caseRunContract, caseWorkflowId } from '../../src/temporal/contracts/case-run.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import { deliveredFirstAttempt, doubleCase } from '../support/case-runs.js';
import { WorkflowLogic } from './support.js';

/**
 * The last node and the case's end in one local activity (runLastNode, case-run revision 12), over mocks:
 * input(a) → Double (a local activity's length) → output(b). What the workflow does with each of the fused
 * activity's answers, and with its failures.
 */
type Mocks = Pick<CaseActivities, 'runNode' | 'runLastNode' | 'caseEnd' | 'endCase' | 'checkCreator'>;
let logic: WorkflowLogic<Mocks>;

beforeAll(async () => {
  logic = await WorkflowLogic.start<Mocks>(['runNode', 'runLastNode', 'caseEnd', 'endCase', 'checkCreator']);
});

afterAll(async () => {
  await logic?.stop();
});

const at = '2026-12-07T00:00:00.000Z';
const doubled: RunNodeResponse = { outputs: { b: 4 }, logs: [], startedAt: at, finishedAt: at };

/** What the store holds once the fused activity wrote the end. */
const completedEnd: RecordedEnd = {
  status: 'COMPLETED',
  results: { b: { value: 4, type: 'float', displayName: 'b' } },
};

interface Options {
  whileRunning?: (handle: WorkflowHandle) => Promise<void>;
  maxAttempts?: number;
  input?: Partial<CaseRunInput>;
  /** What the store's end is, read by caseEnd (null: none yet). */
  store?: () => RecordedEnd | null;
  /** What endCase answers (default: the end written, nothing attempted). */
  endCase?: EndCaseResult;
}

/**
 * Waits until the run has closed without awaiting its result: awaiting one lets the test server skip time, and
 * a local activity (which the server does not see) would then be skipped to its timeout.
 */
async function closed(handle: WorkflowHandle): Promise<void> {
  while ((await handle.describe()).status.name === 'RUNNING') await new Promise((r) => setTimeout(r, 10));
}

async function runCase(
  answer: (request: LastNodeRequest, call: number) => Promise<LastNodeResult>,
  options: Options = {},
) {
  const { chain, input } = doubleCase({ timeout_ms: 5_000, max_attempts: options.maxAttempts ?? 1 }, options.input);
  const requests: LastNodeRequest[] = [];
  const ends: EndCaseInput[] = [];
  let storeReads = 0;
  const mocks: Mocks = {
    checkCreator: () => Promise.resolve(null),
    runNode: () => Promise.reject(new Error('the last node runs with the end')),
    runLastNode(request) {
      requests.push(request);
      return answer(request, requests.length - 1);
    },
    caseEnd() {
      storeReads += 1;
      return Promise.resolve(options.store?.() ?? null);
    },
    endCase(end) {
      ends.push(end);
      return Promise.resolve(options.endCase ?? {});
    },
  };
  const start = (client: Client, taskQueue: string) =>
    startWorkflow(client.workflow, caseRunContract, {
      taskQueue,
      workflowId: caseWorkflowId(input.caseId),
      args: [input],
    });
  let retries: CallbackDeliveryInput[] = [];
  const run = await logic.run(mocks, start, async (handle) => {
    await options.whileRunning?.(handle);
    await closed(handle);
    retries = await callbackRetries(handle);
  });
  return { ...run, requests, ends, storeReads, retries, chain, input };
}

/** The callback retry workflows the run started (their inputs), each terminated: the test's worker does not run them. */
async function callbackRetries(handle: WorkflowHandle): Promise<CallbackDeliveryInput[]> {
  const { events } = await handle.fetchHistory();
  const started = (events ?? []).flatMap((e) => {
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
    return child ? [child] : [];
  });
  for (const child of started)
    await handle.client
      .getHandle(child.workflowId ?? '')
      .terminate('test')
      .catch(() => undefined);
  return started.map((child) =>
    defaultPayloadConverter.fromPayload<CallbackDeliveryInput>(child.input?.payloads?.[0] ?? {}),
  );
}

function causeOf(err: unknown): Error | undefined {
  expect(err).toBeInstanceOf(WorkflowFailedError);
  return (err as WorkflowFailedError).cause;
}

describe('the last node and the end in one local activity', () => {
  it('ends the case with the end the activity wrote: nothing more recorded, the node and the output completed', async () => {
    const run = await runCase(() => Promise.resolve({ node: doubled, ended: 'here' }));

    expect(run.result).toEqual({ status: 'COMPLETED', results: completedEnd.results });
    expect(run.requests).toHaveLength(1);
    expect(run.ends).toEqual([]);
    expect(run.storeReads).toBe(0);
    // The activity gets the workflow's clock and the deadline on it, and the tail it ends the case with.
    const [request] = run.requests;
    expect((request?.deadlineAt ?? 0) - (request?.now ?? 0)).toBe(run.input.deadlineMs);
    expect(Object.keys(request?.tail.graph.nodes ?? {}).sort()).toEqual([run.chain.code, run.chain.output].sort());
    expect(request?.tail.snapshot.state.running).toEqual([run.chain.code]);
  });

  it("takes the store's end when a call that wrote it was lost, and runs neither the node nor the end again", async () => {
    let written = false;
    const run = await runCase(
      () => {
        // The end committed, then the activity's answer was lost (its timeout, say): not the node's own failure.
        written = true;
        return Promise.reject(ApplicationFailure.retryable('the answer was lost', 'Timeout'));
      },
      { maxAttempts: 3, store: () => (written ? completedEnd : null) },
    );

    expect(run.result).toEqual({ status: 'COMPLETED', results: completedEnd.results });
    expect(run.requests).toHaveLength(1);
    expect(run.storeReads).toBe(1);
    expect(run.ends).toEqual([]);
  });

  it("takes the store's end the activity read when its own write found the case ended", async () => {
    const failed: RecordedEnd = { status: 'FAILED', results: {}, error: { message: 'ended elsewhere' } };
    const run = await runCase(() => Promise.resolve({ ended: 'before', end: failed }));

    expect(causeOf(run.err)).toMatchObject({ type: 'CaseFailed', message: 'ended elsewhere' });
    expect(run.ends).toEqual([]);
  });

  it("starts the callback's retries after the activity's first attempt, counting it, unless it delivered", async () => {
    const callbackUrl = 'https://example.test/hook';
    const firstAttempt = (outcome: 'delivered' | 'retry') => ({ ...deliveredFirstAttempt, outcome });
    const ended = async (attempt: EndCaseResult) =>
      runCase(() => Promise.resolve({ node: doubled, ended: 'here', ...attempt }), { input: { callbackUrl } });

    const delivered = await ended({ firstAttempt: firstAttempt('delivered') });
    expect(delivered.result?.status).toBe('COMPLETED');
    expect(delivered.retries).toEqual([]);
    const retried = await ended({ firstAttempt: firstAttempt('retry') });
    expect(retried.retries).toMatchObject([
      { deliveryId: `${retried.input.caseId}-COMPLETED`, callbackUrl, attemptsMade: 1 },
    ]);
    const unsent = await ended({ error: 'the signing secret is away' });
    expect(unsent.retries).toHaveLength(1);
    expect(unsent.retries[0]).toMatchObject({ deliveryId: `${unsent.input.caseId}-COMPLETED`, callbackUrl });
    expect(unsent.retries[0]?.attemptsMade).toBeUndefined();
  }, 30_000);

  it('runs the node again after a failure not its own when the store has no end', async () => {
    const run = await runCase(
      (_, call) =>
        call === 0
          ? Promise.reject(ApplicationFailure.retryable('the answer was lost', 'Timeout'))
          : Promise.resolve({ node: doubled, ended: 'here' }),
      { maxAttempts: 2 },
    );

    expect(run.result?.status).toBe('COMPLETED');
    expect(run.requests.map((r) => r.node.attempt)).toEqual([1, 2]);
    expect(run.storeReads).toBe(1);
  });

  it('lets the activity end the case when a cancel comes while it runs (never abandoned, so never a second end)', async () => {
    let called = (): void => undefined;
    const running = new Promise<void>((resolve) => (called = resolve));
    // Longer than the workflow task's heartbeat (80 % of 10 s): the cancel reaches the run while the activity runs.
    const run = await runCase(
      () => {
        called();
        return delay(9_000).then(() => ({ node: doubled, ended: 'here' as const }));
      },
      {
        whileRunning: async (handle) => {
          await running;
          await handle.cancel();
        },
      },
    );

    expect(run.result).toEqual({ status: 'COMPLETED', results: completedEnd.results });
    expect(run.ends).toEqual([]);
  }, 30_000);

  it('fails the node as usual on its own failure, without asking the store', async () => {
    const details: NodeFailureDetails = {
      error: { message: 'bad input', kind: 'handler' },
      logs: [],
      startedAt: at,
      finishedAt: at,
    };
    const run = await runCase(() =>
      Promise.reject(
        ApplicationFailure.create({
          message: 'bad input',
          type: nodeFailedType,
          nonRetryable: true,
          details: [details],
        }),
      ),
    );

    expect(causeOf(run.err)).toMatchObject({ type: 'CaseFailed', message: 'Node Double failed: bad input' });
    expect(run.storeReads).toBe(0);
    expect(run.ends.map((e) => e.finalize.status)).toEqual(['FAILED']);
  });

  it("ends the case TIMED_OUT when the activity found the deadline passed at the node's end", async () => {
    const run = await runCase(() => Promise.resolve({ node: doubled, ended: 'late' }));

    expect(causeOf(run.err)).toMatchObject({ type: 'CaseTimedOut' });
    const [end] = run.ends;
    expect(end?.finalize.status).toBe('TIMED_OUT');
    expect(end?.finalize.progress.nodes[run.chain.code]).toMatchObject({ status: 'completed', outputs: { b: 4 } });
    expect(end?.finalize.progress.nodes[run.chain.output]?.status).toBe('not_executed');
  });

  it('records the end the usual way when the activity could not write it', async () => {
    const run = await runCase(() => Promise.resolve({ node: doubled, ended: 'unwritten', error: 'the store is away' }));

    expect(run.result).toEqual({ status: 'COMPLETED', results: completedEnd.results });
    const [end] = run.ends;
    expect(end?.finalize.status).toBe('COMPLETED');
    expect(end?.finalize.progress.nodes[run.chain.output]?.status).toBe('completed');
  });

  it("ends as the store says when the usual end finds the case ended otherwise (a timed-out call's late write)", async () => {
    const run = await runCase(
      () => Promise.reject(ApplicationFailure.create({ message: 'lost', type: nodeFailedType, nonRetryable: true })),
      { endCase: { store: completedEnd } },
    );

    expect(run.ends.map((e) => e.finalize.status)).toEqual(['FAILED']);
    expect(run.result).toEqual({ status: 'COMPLETED', results: completedEnd.results });
  });

  it('leaves a run started before the change on its path (runNode, then the end)', async () => {
    const run = await runCase(() => Promise.resolve({ node: doubled, ended: 'here' }), {
      input: { revision: caseRunRevision - 1 },
    });

    // Its runNode mock refuses: the old path called it, and the run failed there, the fused activity never called.
    expect(run.requests).toEqual([]);
    expect(run.ends.map((e) => e.finalize.status)).toEqual(['FAILED']);
  });
});
