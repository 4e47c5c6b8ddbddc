import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseRunRevision } from '../../src/domain/case-run-changes.js';
import { searchAttributes } from '../../src/temporal/contracts/search-attributes.js';
import { Receiver } from '../callbacks/receiver.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { Graph, py } from '../support/graphs.js';
import { startTestService, type TestService } from '../support/harness.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let svc: TestService;

/** A payload of the history as the service reads it: decrypted by its codec, then converted. */
async function valueOf<T>(payload: Payload | null | undefined): Promise<T | undefined> {
  if (!payload) return undefined;
  const [decoded] = await svc.service.context.temporal.codec.decode([payload]);
  return decoded && defaultPayloadConverter.fromPayload<T>(decoded);
}

const summaryOf = (event: HistoryEvent) => valueOf<string>(event.userMetadata?.summary);

/** input(a) → Double (local activity) → Triple (regular activity: over 10 s) → output(c); Triple raises when a < 0. */
function doubleThenTriple(): Graph {
  const g = new Graph();
  const input = g.input([{ name: 'a', type: 'float' }]);
  const quick = g.python(
    'Double',
    py('return {"b": inputs["a"] * 2}'),
    [{ name: 'a', type: 'float' }],
    [{ name: 'b', type: 'float' }],
  );
  const slow = g.python(
    'Triple',
    py('if inputs["b"] < 0:\n    raise ValueError("negative")\nreturn {"c": inputs["b"] * 3}'),
    [{ name: 'b', type: 'float' }],
    [{ name: 'c', type: 'float' }],
    { execution: { timeout_ms: 20_000 } },
  );
  const output = g.output([{ name: 'c', type: 'float' }]);
  g.edge(input, quick);
  g.edge(quick, slow);
  g.edge(slow, output);
  return g;
}

describe('runs you can find in the Temporal UI', () => {
  const receiver = new Receiver((_call, res) => {
    res.statusCode = 500;
    res.end('not now');
  });
  let callbackUrl = '';
  beforeAll(async () => {
    svc = await startTestService();
    callbackUrl = `http://127.0.0.1:${await receiver.listen()}/hook`;
  });
  afterAll(async () => {
    await svc?.stop();
    await receiver.close();
  });

  it('names each node activity after the node and its kind, local and regular alike', async () => {
    const wf = await createWorkflow(svc, doubleThenTriple());
    const caseId = await startCase(svc, wf.workflowId, { a: 1 });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    // The store says COMPLETED inside the run's last workflow task; its markers are in history once the run closes.
    const handle = svc.service.context.temporal.client.workflow.getHandle(`case-${caseId}`);
    await handle.result();
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes).map(summaryOf);
    const local = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    expect(await Promise.all(scheduled)).toEqual(['Triple (python_code)']);
    expect(await Promise.all(local.map(summaryOf))).toEqual(['Double (python_code)', 'Record the end of the case']);
  });

  it('records no patch markers: a run started by this code knows every change by its revision', async () => {
    const wf = await createWorkflow(svc, doubleThenTriple(), 'revision');
    const caseId = await startCase(svc, wf.workflowId, { a: 2 }, { callbackUrl });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const handle = svc.service.context.temporal.client.workflow.getHandle(`case-${caseId}`);
    await handle.result();
    const events = (await handle.fetchHistory()).events ?? [];
    const started = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect((await valueOf<{ revision?: number }>(started))?.revision).toBe(caseRunRevision);
    const markers = events.map((e) => e.markerRecordedEventAttributes?.markerName).filter(Boolean);
    expect(markers).not.toContain('core_patch');
    const upserted = events.flatMap((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
    );
    // Only the case status, once; no TemporalChangeVersion.
    expect(upserted).toEqual(['CaseflowCaseStatus']);
    // The changes are in force all the same: the refused callback's retries run in their own workflow.
    expect(events.some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(true);
    await svc.service.context.temporal.client.workflow.getHandle(`callback-${caseId}`).terminate('test over');
  });

  it('tags case runs with organization, workspace, workflow, source and the final case status', async () => {
    const wf = await createWorkflow(svc, doubleThenTriple(), 'tagged');
    const completed = await startCase(svc, wf.workflowId, { a: 1 });
    // The receiver refuses, so the callback's retry workflow starts: it carries the case's tags.
    const failed = await startCase(svc, wf.workflowId, { a: -1 }, { callbackUrl });
    expect((await waitForEnd(svc, completed)).status).toBe('COMPLETED');
    expect((await waitForEnd(svc, failed)).status).toBe('FAILED');
    const { client } = svc.service.context.temporal;

    // The final status tag is upserted after the store write: read it once the run has closed.
    const completedRun = client.workflow.getHandle(`case-${completed}`);
    await completedRun.result();
    const described = await completedRun.describe();
    const tags = described.typedSearchAttributes;
    expect(tags.get(searchAttributes.organizationId)).toBe(svc.organizationId);
    expect(tags.get(searchAttributes.workspaceId)).toBe(svc.workspaceId);
    expect(tags.get(searchAttributes.workflowId)).toBe(wf.workflowId);
    expect(tags.get(searchAttributes.source)).toBe('api');
    expect(tags.get(searchAttributes.caseStatus)).toBe('COMPLETED');

    // The UI's query "failed cases of this workspace today", through the visibility store (eventually consistent).
    const today = new Date(Date.now() - 60_000).toISOString();
    const query =
      `WorkflowType = 'caseRun' AND CaseflowWorkspaceId = '${svc.workspaceId}' AND ` +
      `CaseflowWorkflowId = '${wf.workflowId}' AND CaseflowCaseStatus = 'FAILED' AND StartTime > '${today}'`;
    const found = await listUntil(client, query, (ids) => ids.includes(`case-${failed}`));
    expect(found).toEqual([`case-${failed}`]);

    const callbacks = await listUntil(
      client,
      `WorkflowType = 'callbackDelivery' AND CaseflowWorkflowId = '${wf.workflowId}' AND CaseflowCaseStatus = 'FAILED'`,
      (ids) => ids.length > 0,
    );
    expect(callbacks).toEqual([`callback-${failed}`]);
    await client.workflow.getHandle(`callback-${failed}`).terminate('test over');
  });
});

/** Workflow ids the visibility query finds, asked again until `done` holds (visibility lags the run by a moment). */
async function listUntil(
  client: TestService['service']['context']['temporal']['client'],
  query: string,
  done: (ids: string[]) => boolean,
): Promise<string[]> {
  for (let round = 0; ; round++) {
    const ids: string[] = [];
    for await (const run of client.workflow.list({ query })) ids.push(run.workflowId);
    if (done(ids) || round >= 100) return ids;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
