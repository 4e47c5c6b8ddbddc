import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createCaseActivities, type CaseActivities, type LastNodeRequest } from '../../activities/cases.js';
import type { ActivityDeps } from '../../activities/deps.js';
import type { OpenDeliveryInput } from '../../src/callbacks/delivery.js';
import { CaseScheduler } from '../../src/domain/case-scheduler.js';
import type { FinalizeCaseInput, RecordedEnd } from '../../src/domain/cases.js';
import { testBranchKind } from '../support/branch-kind.js';
import { deliveredFirstAttempt as delivered } from '../support/case-runs.js';
import { Graph, vars } from '../support/graphs.js';

/**
 * The fused last node's activity (runLastNode) over fake services: the node is the test kind `test_branch` (run in
 * the activity, as the bundle does not know it), the last node of input → branch → output.
 */

interface Store {
  /** What finalize answers: whether it wrote the end, or its failure. */
  finalize: () => Promise<boolean>;
  end?: RecordedEnd;
}

function activities(store: Store) {
  const finalized: FinalizeCaseInput[] = [];
  const attempts: OpenDeliveryInput[] = [];
  const deps = {
    config: { cases: { maxNodeOutputBytes: 100_000 } },
    logger: { error: () => undefined },
    tracing: { recordNodeSpans: () => undefined },
    services: {
      cases: {
        finalize: (input: FinalizeCaseInput) => {
          finalized.push(input);
          return store.finalize();
        },
        recordedEnd: () => Promise.resolve(store.end),
      },
      callbacks: {
        firstAttempt: (input: OpenDeliveryInput) => {
          attempts.push(input);
          return Promise.resolve(delivered);
        },
      },
    },
  } as unknown as ActivityDeps;
  return { activities: createCaseActivities(deps), finalized, attempts };
}

/** input(text) → Branch (`test_branch`, run in the activity: the bundle does not know it) → output, the branch last. */
function lastNodeGraph(): { g: Graph; input: string; branch: string } {
  const g = new Graph();
  const textId = randomUUID();
  const valueId = randomUUID();
  const input = g.input([{ id: textId, name: 'text' }]);
  const branch = g.node({
    name: 'Branch',
    type: 'branch',
    handler_class: testBranchKind.handlerClass,
    process: { threshold: 3 },
    input_schema: vars([{ id: valueId, name: 'value' }]),
    variable_mappings: { [valueId]: { from_node_id: input, from_variable_id: textId } },
  });
  g.chain(input, branch, g.output([{ name: 'result' }]));
  return { g, input, branch };
}

/** The request the workflow sends when the branch node, the last, begins (input done, output pending). */
function request(now: number, deadlineAt: number, callbackUrl?: string): LastNodeRequest {
  const { g, input, branch } = lastNodeGraph();
  const scheduler = new CaseScheduler({ caseId: 'case-1', graph: g, inputs: { text: 'long enough' } });
  scheduler.start();
  scheduler.begin(input, new Date(now).toISOString());
  scheduler.complete(input, { outputs: { text: 'long enough' }, logs: [] });
  scheduler.settle(input, new Date(now).toISOString());
  scheduler.begin(branch, new Date(now).toISOString());
  const inputs = scheduler.inputsOf(branch);
  const tail = scheduler.lastNodeTail(branch);
  if (!tail) throw new Error('the branch is not the last node');
  const node = g.nodes[branch];
  if (!node) throw new Error('no branch node');
  return {
    node: { caseId: 'case-1', organizationId: 'org-1', workspaceId: 'ws-1', node, inputs, attempt: 1 },
    tail: structuredClone(tail),
    run: {
      runId: 'run-1',
      workflowId: 'case-case-1',
      caseInputs: { text: 'long enough' },
      deadlineMs: 60_000,
      ...(callbackUrl ? { callbackUrl } : {}),
    },
    now,
    deadlineAt,
  };
}

/** The activity as a free function (the mock environment calls it without its object). */
const runLastNode = (a: CaseActivities) => (r: LastNodeRequest) => a.runLastNode(r);

const env = () => new MockActivityEnvironment({ startToCloseTimeoutMs: 130_000 });

describe('runLastNode', () => {
  it("runs the node, writes the end it makes and makes the callback's first attempt", async () => {
    const { activities: a, finalized, attempts } = activities({ finalize: () => Promise.resolve(true) });
    const now = Date.now();
    const result = await env().run(runLastNode(a), request(now, now + 60_000, 'https://example.test/hook'));

    expect(result).toMatchObject({
      ended: 'here',
      firstAttempt: delivered,
      node: { logs: [{ message: 'threshold 3' }] },
    });
    expect(finalized).toHaveLength(1);
    expect(finalized[0]).toMatchObject({ caseId: 'case-1', runId: 'run-1', status: 'COMPLETED' });
    expect(finalized[0]?.progress.remaining).toEqual([]);
    expect(Object.values(finalized[0]?.progress.nodes ?? {}).map((n) => n.status)).toEqual([
      'completed',
      'completed',
      'completed',
    ]);
    expect(attempts.map((d) => d.deliveryId)).toEqual(['case-1-COMPLETED']);
  });

  it("returns the store's end, sending nothing, when the case has ended already (a lost call retried)", async () => {
    const end: RecordedEnd = { status: 'COMPLETED', results: {} };
    const { activities: a, attempts } = activities({ finalize: () => Promise.resolve(false), end });
    const now = Date.now();
    const result = await env().run(runLastNode(a), request(now, now + 60_000, 'https://example.test/hook'));

    expect(result).toEqual({ ended: 'before', end });
    expect(attempts).toEqual([]);
  });

  it("writes nothing when the deadline passed by the node's end on the workflow's clock", async () => {
    const { activities: a, finalized } = activities({ finalize: () => Promise.resolve(true) });
    // The workflow's clock is an hour behind this process's: only the workflow's counts.
    const now = Date.now() - 3_600_000;
    expect(await env().run(runLastNode(a), request(now, now + 60_000))).toMatchObject({ ended: 'here' });
    expect(await env().run(runLastNode(a), request(now, now))).toMatchObject({ ended: 'late', node: { outputs: {} } });
    expect(finalized).toHaveLength(1);
  });

  it('says the end is unwritten when the write fails, for the workflow to record it', async () => {
    const { activities: a } = activities({ finalize: () => Promise.reject(new Error('the store is away')) });
    const now = Date.now();
    expect(await env().run(runLastNode(a), request(now, now + 60_000))).toMatchObject({
      ended: 'unwritten',
      error: 'the store is away',
    });
  });

  it('counts an end the store holds as written when the write fails after its commit (an event dispatch)', async () => {
    const end: RecordedEnd = { status: 'COMPLETED', results: {} };
    const { activities: a } = activities({ finalize: () => Promise.reject(new Error('dispatch failed')), end });
    const now = Date.now();
    expect(await env().run(runLastNode(a), request(now, now + 60_000))).toEqual({ ended: 'before', end });
  });

  it('writes nothing when the call was cancelled (timed out) before the end', async () => {
    const { activities: a, finalized } = activities({ finalize: () => Promise.resolve(true) });
    const mock = env();
    const now = Date.now();
    const cancelled = (r: LastNodeRequest) => {
      mock.cancel('TIMED_OUT');
      return a.runLastNode(r);
    };
    await expect(mock.run(cancelled, request(now, now + 60_000))).rejects.toThrow();
    expect(finalized).toEqual([]);
  });
});
