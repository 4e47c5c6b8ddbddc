import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  nodeFailedType,
  type CaseActivities,
  type EndCaseInput,
  type NodeFailureDetails,
  type RunNodeRequest,
  type RunNodeResponse,
} from '../../activities/cases.js';
import { caseRunRevision } from '../../src/domain/case-run-changes.js';
import type { CaseRunInput } from '../../src/domain/cases.js';
import { caseRunContract, caseWorkflowId } from '../../src/temporal/contracts/case-run.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import type { WorkflowOf } from '../../src/temporal/contracts/contract.js';
import type { WorkflowNode } from '../../src/domain/graph.js';
import { busyFailureKind } from '../../src/domain/node-kinds/kind.js';
import { deliveredFirstAttempt as delivered, doubleCase } from '../support/case-runs.js';
import { Graph, py, type Var } from '../support/graphs.js';
import { hangUntilCancelled, scheduledAt, until, WorkflowLogic } from './support.js';

/**
 * The case run's deadline, retries, busy waits and cancellation, over a
 * mocked runNode and endCase: input(a) → Double → output(b). Double's limit
 * is above the local-activity bound, so it runs as a regular activity and
 * the server's clock (which skips) stamps each call.
 * A node that hangs would stop the server's clock (see support.ts), so the
 * deadline is met by a node its runner turns away for good.
 */
type CaseMocks = Pick<CaseActivities, 'runNode' | 'endCase' | 'checkCreator'>;
let logic: WorkflowLogic<CaseMocks>;

beforeAll(async () => {
  logic = await WorkflowLogic.start<CaseMocks>(['runNode', 'endCase', 'checkCreator']);
});

afterAll(async () => {
  await logic?.stop();
});

/** One call of the mocked runNode: the attempt it was asked for, and when (workflow time). */
interface NodeCall {
  attempt: number;
  at: number;
}

interface CaseOptions {
  execution?: WorkflowNode['execution'];
  input?: Partial<CaseRunInput>;
  /** What the check of the creator's key answers (a refusal, or null); the keys it was asked about are kept. */
  creator?: () => Promise<string | null>;
  /** Runs once the run has started; may signal, cancel, or wait for the calls. */
  whileRunning?: (handle: WorkflowHandle<WorkflowOf<typeof caseRunContract>>, calls: NodeCall[]) => Promise<void>;
}

/** Starts a case run of `input` on the worker's task queue. */
const startCase = (input: CaseRunInput) => (client: Client, taskQueue: string) =>
  startWorkflow(client.workflow, caseRunContract, {
    taskQueue,
    workflowId: caseWorkflowId(input.caseId),
    args: [input],
  });

/** One case over a runNode that answers as `answer` says (given the 0-based call number). */
async function runCase(
  answer: (request: RunNodeRequest, call: number) => Promise<RunNodeResponse>,
  options: CaseOptions = {},
) {
  const { chain, input } = doubleCase({ timeout_ms: 60_000, ...options.execution }, options.input);
  const calls: NodeCall[] = [];
  const ends: EndCaseInput[] = [];
  const checkedKeys: string[] = [];
  const mocks: CaseMocks = {
    checkCreator(check) {
      checkedKeys.push(check.keyId);
      return options.creator ? options.creator() : Promise.resolve(null);
    },
    runNode(request) {
      calls.push({ attempt: request.attempt, at: scheduledAt() });
      return answer(request, calls.length - 1);
    },
    endCase(end) {
      ends.push(end);
      return Promise.resolve(end.callback ? { firstAttempt: delivered } : {});
    },
  };
  const { whileRunning } = options;
  const run = await logic.run(mocks, startCase(input), whileRunning && ((handle) => whileRunning(handle, calls)));
  return { ...run, calls, ends, checkedKeys, chain, input };
}

/** The one end the run recorded through endCase. */
function recordedEnd(ends: EndCaseInput[]): EndCaseInput {
  expect(ends).toHaveLength(1);
  return ends[0] as EndCaseInput;
}

/** The calls came (in workflow time) at least `waits` apart: the timers fired before the next call. */
function expectSpacing(calls: NodeCall[], waits: number[]): void {
  const gaps = calls.slice(1).map((call, i) => call.at - (calls[i] as NodeCall).at);
  expect(gaps).toHaveLength(waits.length);
  gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(waits[i] as number));
}

function doubled(request: RunNodeRequest): Promise<RunNodeResponse> {
  const at = new Date(scheduledAt()).toISOString();
  return Promise.resolve({ outputs: { b: Number(request.inputs.a) * 2 }, logs: [], startedAt: at, finishedAt: at });
}

/** How runNode reports a failed node: an ApplicationFailure of type NodeFailed carrying the details. */
function nodeFailure(error: NodeFailureDetails['error'], retryAfterMs?: number): Promise<never> {
  const at = new Date(scheduledAt()).toISOString();
  const details: NodeFailureDetails = {
    error,
    logs: [],
    startedAt: at,
    finishedAt: at,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
  return Promise.reject(
    ApplicationFailure.create({ message: error.message, type: nodeFailedType, details: [details] }),
  );
}

/** The runner turned the node away (a full queue), as the Python pool does, asking for `retryAfterMs`. */
function busy(retryAfterMs = 500): Promise<never> {
  return nodeFailure({ message: 'the Python runners are busy', kind: busyFailureKind }, retryAfterMs);
}

/** The failure a run that did not complete ended with (CaseFailed, CaseTimedOut, a cancellation). */
function causeOf(err: unknown): Error | undefined {
  expect(err).toBeInstanceOf(WorkflowFailedError);
  return (err as WorkflowFailedError).cause;
}

describe('the deadline', () => {
  it('ends a case whose node never finishes TIMED_OUT at the deadline, in skipped time', async () => {
    const deadlineMs = 10 * 60_000;
    // Turned away for good: the node never runs, the case waits on its backoff timers.
    const run = await runCase(() => busy(), { input: { deadlineMs } });

    expect(causeOf(run.err)).toMatchObject({ type: 'CaseTimedOut' });
    expect(run.workflowMs).toBeGreaterThanOrEqual(deadlineMs);
    expect(run.workflowMs).toBeLessThan(deadlineMs + 30_000);
    expect(run.wallMs).toBeLessThan(deadlineMs / 10);
    const { finalize, callback } = recordedEnd(run.ends);
    expect(callback).toBeUndefined();
    expect(finalize.status).toBe('TIMED_OUT');
    expect(finalize.progress.error).toEqual({
      message: `The case did not finish within its deadline of ${deadlineMs} ms`,
    });
    const { input, code, output } = run.chain;
    expect(finalize.progress.nodes[input]?.status).toBe('completed');
    expect(finalize.progress.nodes[code]).toMatchObject({ status: 'cancelled', attempts: 1, inputs: { a: 2 } });
    expect(finalize.progress.nodes[output]?.status).toBe('not_executed');
    expect(finalize.progress.results).toEqual({});
  });
});

describe("the creator's key, checked again by a run that starts later", () => {
  const refusal = 'The API key that created case x can no longer be used: API key has been revoked';

  it('ends the case FAILED with the refusal before any node runs, every node not_executed', async () => {
    const run = await runCase(doubled, {
      input: { creatorKeyId: 'key-1', callbackUrl: 'https://example.test/hook' },
      creator: () => Promise.resolve(refusal),
    });

    expect(causeOf(run.err)).toMatchObject({ type: 'CaseFailed', message: refusal });
    expect(run.checkedKeys).toEqual(['key-1']);
    expect(run.calls).toEqual([]);
    const { finalize, callback } = recordedEnd(run.ends);
    expect(finalize.status).toBe('FAILED');
    expect(finalize.progress.error).toEqual({ message: refusal });
    expect(Object.values(finalize.progress.nodes).map((n) => n.status)).toEqual(Array(3).fill('not_executed'));
    // Its caller hears of it as of any failed case.
    expect(callback?.body).toMatchObject({ status: 'FAILED', error: { message: refusal } });
  });

  it('refuses too when the key cannot be checked (the store away past the retries)', async () => {
    const run = await runCase(doubled, {
      input: { creatorKeyId: 'key-1' },
      creator: () => Promise.reject(ApplicationFailure.nonRetryable('the store is away')),
    });

    expect(causeOf(run.err)).toMatchObject({ type: 'CaseFailed' });
    expect(run.calls).toEqual([]);
    expect(recordedEnd(run.ends).finalize.progress.error?.message).toMatch(
      /^The API key that created case .* could not be checked: the store is away$/,
    );
  });

  it('runs the case when the key still may; a run that starts at once asks nothing', async () => {
    const later = await runCase(doubled, { input: { creatorKeyId: 'key-1' } });
    expect(later.result?.status).toBe('COMPLETED');
    expect(later.checkedKeys).toEqual(['key-1']);
    const now = await runCase(doubled);
    expect(now.result?.status).toBe('COMPLETED');
    expect(now.checkedKeys).toEqual([]);
  });
});

describe('retries', () => {
  it('retries a retryable failure after its Retry-After, counting the attempt in the audit', async () => {
    const retryAfterMs = 90_000;
    const run = await runCase(
      (request, call) =>
        call === 0 ? nodeFailure({ message: 'quota exhausted', kind: 'rate_limit' }, retryAfterMs) : doubled(request),
      { execution: { max_attempts: 3 } },
    );

    expect(run.err).toBeUndefined();
    expect(run.result?.status).toBe('COMPLETED');
    expect(run.calls.map((c) => c.attempt)).toEqual([1, 2]);
    expect(run.timers).toEqual([run.input.deadlineMs, retryAfterMs]);
    expectSpacing(run.calls, [retryAfterMs]);
    const { finalize } = recordedEnd(run.ends);
    expect(finalize.status).toBe('COMPLETED');
    expect(finalize.progress.nodes[run.chain.code]).toMatchObject({
      status: 'completed',
      attempts: 2,
      outputs: { b: 4 },
    });
    expect(Object.values(finalize.progress.results).map((r) => r.value)).toEqual([4]);
  });

  it('fails the case naming the node once it failed its max attempts, backing off 1 s, 2 s', async () => {
    const run = await runCase(() => nodeFailure({ message: 'upstream answered 503', kind: 'handler' }), {
      execution: { max_attempts: 3 },
    });

    expect(causeOf(run.err)).toMatchObject({
      type: 'CaseFailed',
      message: 'Node Double failed: upstream answered 503',
    });
    expect(run.calls.map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(run.timers).toEqual([run.input.deadlineMs, 1000, 2000]);
    expectSpacing(run.calls, [1000, 2000]);
    const { finalize } = recordedEnd(run.ends);
    expect(finalize.status).toBe('FAILED');
    expect(finalize.progress.error).toEqual({
      message: 'Node Double failed: upstream answered 503',
      nodeId: run.chain.code,
    });
    expect(finalize.progress.nodes[run.chain.code]).toMatchObject({
      status: 'failed',
      attempts: 3,
      error: { message: 'upstream answered 503', kind: 'handler' },
    });
    expect(finalize.progress.failed).toEqual([run.chain.code]);
    expect(finalize.progress.nodes[run.chain.output]?.status).toBe('not_executed');
  });
});

describe('busy waits', () => {
  it('tries a node its runner turned away again, 1 s doubling to 30 s, without spending an attempt', async () => {
    const refusals = 7;
    const run = await runCase((request, call) => (call < refusals ? busy() : doubled(request)), {
      execution: { max_attempts: 1 },
    });

    expect(run.result?.status).toBe('COMPLETED');
    expect(run.calls.map((c) => c.attempt)).toEqual(Array<number>(refusals + 1).fill(1));
    const waits = [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000];
    expect(run.timers).toEqual([run.input.deadlineMs, ...waits]);
    expectSpacing(run.calls, waits);
    const { finalize } = recordedEnd(run.ends);
    expect(finalize.progress.nodes[run.chain.code]).toMatchObject({
      status: 'completed',
      attempts: 1,
      outputs: { b: 4 },
    });
  });
});

describe('cancellation', () => {
  it('records CANCELLED when the run is cancelled while a node runs, and still calls back', async () => {
    const callbackUrl = 'http://127.0.0.1:9/callback';
    let nodeStopped = false;
    const run = await runCase(
      () =>
        hangUntilCancelled().finally(() => {
          nodeStopped = true;
        }),
      {
        input: { callbackUrl },
        whileRunning: async (handle, calls) => {
          await until(() => calls.length > 0);
          await handle.cancel();
          // The cancel reaches the node's activity (its heartbeat), not only the workflow.
          await until(() => nodeStopped);
        },
      },
    );

    expect(causeOf(run.err)?.name).toBe('CancelledFailure');
    const { finalize, callback } = recordedEnd(run.ends);
    expect(finalize.status).toBe('CANCELLED');
    expect(finalize.progress.error).toEqual({ message: 'The case was cancelled' });
    expect(finalize.progress.nodes[run.chain.code]).toMatchObject({ status: 'cancelled', attempts: 1 });
    expect(callback).toMatchObject({
      deliveryId: `${run.input.caseId}-CANCELLED`,
      caseId: run.input.caseId,
      callbackUrl,
      body: {
        caseId: run.input.caseId,
        status: 'CANCELLED',
        results: {},
        error: { message: 'The case was cancelled' },
      },
    });
  });
});

/**
 * Waits until the run has closed without awaiting its result: awaiting one lets the test server skip time, and
 * a run ending in a local activity (which the server does not see) would then be skipped to its timeout.
 */
async function closed(handle: WorkflowHandle): Promise<void> {
  while ((await handle.describe()).status.name === 'RUNNING') await new Promise((r) => setTimeout(r, 10));
}

describe('stack traces', () => {
  it("takes none in workflow code: the SDK's query of a waiting run's promises shows no frame", async () => {
    let stacks = '';
    const run = await runCase(hangUntilCancelled, {
      whileRunning: async (handle, calls) => {
        await until(() => calls.length > 0);
        // The SDK records a stack for every promise the run creates, for this query (sdk-typescript#1587).
        stacks = await handle.query<string>('__stack_trace');
        await handle.cancel();
      },
    });

    expect(causeOf(run.err)?.name).toBe('CancelledFailure');
    expect(stacks).not.toMatch(/\bat\b/);
  });
});

describe('two runs at once in one worker', () => {
  /**
   * The workflow modules are preloaded (src/temporal/workflow-preload.ts): one copy serves every run of the
   * worker's context. Two runs of one graph (the same node ids) with different inputs, each holding its state
   * while the other's node runs: a run that saw the other's (a module-level map of node outputs, say) would end
   * with the wrong results.
   */
  it('keeps runs of one graph with different inputs apart', async () => {
    // input(a) → Double(a → b) → output(a, b): the output reads `a`, recorded two tasks before, when Double ends.
    const graph = new Graph();
    const a: Var = { name: 'a', type: 'float' };
    const b: Var = { name: 'b', type: 'float' };
    const source = py('return {"b": inputs["a"] * 2}');
    const [entry, code, output] = [
      graph.input([a]),
      graph.python('Double', source, [a], [b], { execution: { timeout_ms: 60_000 } }),
      graph.output([a, b]),
    ];
    graph.chain(entry, code, output);
    graph.edge(entry, output);
    const values = [2, 5];
    const asked: number[] = [];
    const ends: EndCaseInput[] = [];
    const mocks: CaseMocks = {
      checkCreator: () => Promise.resolve(null),
      async runNode(request) {
        asked.push(Number(request.inputs.a));
        // Neither node answers before both runs have scheduled theirs.
        await until(() => asked.length === values.length);
        return doubled(request);
      },
      endCase(end) {
        ends.push(end);
        return Promise.resolve({});
      },
    };
    // Each run's result is awaited once both have closed (see closed()).
    const handles: WorkflowHandle[] = [];
    const inputs = values.map((value): CaseRunInput => ({
      caseId: randomUUID(),
      organizationId: randomUUID(),
      workspaceId: randomUUID(),
      graph: { nodes: graph.nodes, edges: graph.edges },
      inputs: { a: value },
      deadlineMs: 3_600_000,
      revision: caseRunRevision,
    }));

    const runs = await Promise.all(
      inputs.map((input) =>
        logic.run(mocks, startCase(input), async (handle) => {
          handles.push(handle);
          await until(() => handles.length === inputs.length);
          await Promise.all(handles.map(closed));
        }),
      ),
    );

    expect(runs.map((run) => run.result?.status)).toEqual(['COMPLETED', 'COMPLETED']);
    expect(asked.sort()).toEqual(values);
    for (const { caseId, inputs: given } of inputs) {
      const value = given.a as number;
      const { progress } = recordedEnd(ends.filter((end) => end.finalize.caseId === caseId)).finalize;
      expect(progress.nodes[code]).toMatchObject({
        status: 'completed',
        inputs: { a: value },
        outputs: { b: value * 2 },
      });
      expect(Object.entries(progress.results).map(([name, r]) => [name, r.value])).toEqual([
        ['a', value],
        ['b', value * 2],
      ]);
    }
  });
});
