import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { audit, caseStatus, createWorkflow, execute, initiate, results, startCase, waitForEnd } from './support.js';
import { Graph, py, sleeper, textChain } from '../support/graphs.js';

let svc: TestService;
beforeAll(async () => {
  // A UI the operator says enforces access (TEMPORAL_UI_URL, CASEFLOW_TENANTS_MAY_USE_TEMPORAL_UI): tenants get links.
  svc = await startTestService({ config: { temporal: { uiUrl: 'http://temporal-ui.test', tenantsMayUseUi: true } } });
});
afterAll(async () => {
  await svc?.stop();
});

function echo(label: string): Graph {
  return textChain('Echo', py(`return {"text": "${label}:" + inputs["text"]}`));
}

/** Cancels a case, which must answer 200; its body. */
const cancel = (caseId: string) =>
  answered(svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }), 200);

describe('case lifecycle', () => {
  it('answers 202 with the exact body before the end, then 200', async () => {
    const wf = await createWorkflow(svc, sleeper(1));
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    const resultsOf = () => svc.client.GET('/api/v1/case/{caseId}/results', { params: { path: { caseId } } });
    const pending = await answered(resultsOf(), 202);
    expect(Object.keys(pending).sort()).toEqual(['errorCode', 'message', 'path', 'statusCode', 'timestamp']);
    expect(pending).toMatchObject({ statusCode: 202, errorCode: '', path: `/api/v1/case/${caseId}/results` });
    expect((await execute(svc, caseId, { inputs: { text: 'hi' } })).status).toBe(202);
    await answered(resultsOf(), 202);
    const status = await caseStatus(svc, caseId);
    expect(status.status).toBe('RUNNING');
    expect(status.temporalUiUrl).toMatch(
      new RegExp(`^http://temporal-ui.test/namespaces/default/workflows/case-${caseId}/.+/history$`),
    );
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect((await results(svc, caseId)).text?.value).toBe('hi');
  });

  it('refuses to execute a case twice (409) and starts one run', async () => {
    const wf = await createWorkflow(svc, echo('once'));
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    const [a, b] = await Promise.all([
      execute(svc, caseId, { inputs: { text: 'x' } }),
      execute(svc, caseId, { inputs: { text: 'y' } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const again = await execute(svc, caseId, { inputs: { text: 'z' } });
    expect(again.status).toBe(409);
    expect(again.body.errorCode).toBe('CONFLICT');
  });

  it('rejects bad inputs with 400 and changes nothing', async () => {
    const g = new Graph();
    const input = g.input([
      { name: 'name' },
      { name: 'age', type: 'float' },
      { name: 'note', nullable: true },
      { name: 'extra', optional: true },
      { name: 'size', optional: true, tags: [{ variable_name: 'options', value: ['S', 'M'] }] },
    ]);
    const output = g.output([{ name: 'name' }]);
    g.edge(input, output);
    const wf = await createWorkflow(svc, g);
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ inputs: { name: 'a', age: 'old', note: 'n' } }, 'body.inputs.age'],
      [{ inputs: { name: 'a', note: 'n' } }, 'body.inputs.age'],
      [{ inputs: { name: null, age: 3, note: 'n' } }, 'body.inputs.name'],
      [{ inputs: { name: 'a', age: 3, note: 'n', unknown: 1 } }, 'body.inputs.unknown'],
      [{ inputs: { name: 'a', age: 3, note: 'n', size: 'XL' } }, 'body.inputs.size'],
      [
        { jobPayloadSchema: { name: { value: 'a' }, age: { value: true }, note: { value: null } } },
        'body.jobPayloadSchema.age',
      ],
      [{ inputs: { name: 'a', age: 3, note: null }, callbackUrl: 'ftp://example.com/x' }, 'body.callbackUrl'],
    ];
    for (const [body, field] of cases) {
      const r = await execute(svc, caseId, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(r.body.metadata)).toContain(field);
    }
    expect((await caseStatus(svc, caseId)).status).toBe('PENDING');
    // null where nullable, optional left out, populated jobPayloadSchema: accepted.
    const ok = await execute(svc, caseId, {
      jobPayloadSchema: { name: { value: 'a', type: 'str' }, age: { value: 3 }, note: { value: null } },
    });
    expect(ok.status, ok.text).toBe(202);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    // Not a uuid, which the document forbids.
    expect((await svc.request('GET', '/api/v1/case/not-a-uuid/status')).status).toBe(400);
    await refused(
      svc.client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId: crypto.randomUUID() } } }),
      404,
    );
  });

  it('cancels a running case (CANCELLED, node cancelled) and a pending one', async () => {
    const wf = await createWorkflow(svc, sleeper(4));
    const caseId = await startCase(svc, wf.workflowId, { text: 'c' });
    for (let i = 0; i < 100; i++) {
      if ((await caseStatus(svc, caseId)).currentNode) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const live = await audit(svc, caseId);
    expect(live.running_node).not.toBe('');
    expect((await cancel(caseId)).status).toBe('CANCELLED');
    const a = await audit(svc, caseId);
    expect(a.status).toBe('CANCELLED');
    expect(a.audit.nodes_execution_data[live.running_node]?.status).toBe('cancelled');
    await refused(svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }), 409);

    const pendingId = await initiate(svc, { workflowId: wf.workflowId });
    expect((await cancel(pendingId)).status).toBe('CANCELLED');
    expect((await execute(svc, pendingId, { inputs: { text: 'late' } })).status).toBe(409);
  });

  it('ends TIMED_OUT when the case deadline passes', async () => {
    const wf = await createWorkflow(svc, sleeper(5));
    const caseId = await startCase(svc, wf.workflowId, { text: 't' }, { timeoutMs: 1000 });
    const status = await waitForEnd(svc, caseId);
    expect(status.status).toBe('TIMED_OUT');
    expect((status.error as { message: string }).message).toContain('deadline');
    await answered(svc.client.GET('/api/v1/case/{caseId}/results', { params: { path: { caseId } } }), 200);
  });

  it('runs the pinned version after an update, the latest active one otherwise', async () => {
    const wf = await createWorkflow(svc, echo('v1'));
    const v2 = echo('v2');
    await answered(
      svc.client.PATCH('/api/v1/workflow/{workflowId}', {
        params: { path: { workflowId: wf.workflowId } },
        body: { nodes: v2.nodes, edges: v2.edges, activeStatus: 'active' },
      }),
      200,
    );
    const pinned = await answered(
      svc.client.POST('/api/v1/case', { body: { referenceEntityId: wf.entityId, workflowVersionNumber: 1 } }),
      201,
    );
    expect(pinned).toMatchObject({ workflowVersionNumber: 1, workflowVersionId: wf.workflowVersionId });
    const latest = await answered(svc.client.POST('/api/v1/case', { body: { workflowId: wf.workflowId } }), 201);
    expect(latest.workflowVersionNumber).toBe(2);
    const [pinnedId, latestId] = [pinned.caseId, latest.caseId];
    await execute(svc, pinnedId, { inputs: { text: 'a' } });
    await execute(svc, latestId, { inputs: { text: 'a' } });
    await waitForEnd(svc, pinnedId);
    await waitForEnd(svc, latestId);
    expect((await results(svc, pinnedId)).text?.value).toBe('v1:a');
    expect((await results(svc, latestId)).text?.value).toBe('v2:a');
  });

  it('serves the deprecated job endpoints over the same cases, with every audit field', async () => {
    const wf = await createWorkflow(svc, echo('job'));
    const init = await answered(
      svc.client.POST('/job/initiate', {
        body: {
          workflowId: crypto.randomUUID(),
          referenceEntityId: wf.entityId,
          source: 'email-agent',
          title: 'T',
          initialInput: { text: 'from-init' },
        },
      }),
      201,
    );
    const jobId = init.jobExecutionId;
    const job = { params: { path: { jobExecutionId: jobId } } };
    expect((await svc.client.GET('/job/{jobExecutionId}/results', job)).response.status).toBe(202);
    await answered(svc.client.POST('/job/execute', { body: { jobExecutionId: jobId } }), 202);
    const status = await waitForEnd(svc, jobId, 30_000, '/job');
    expect(status).toMatchObject({ status: 'COMPLETED', source: 'email-agent', title: 'T' });
    const r = await answered(svc.client.GET('/job/{jobExecutionId}/results', job), 200);
    expect('results' in r && r.results).toEqual({ text: { value: 'job:from-init', type: 'str', displayName: 'text' } });
    const a = await audit(svc, jobId, '/job');
    expect(Object.keys(a).sort()).toEqual(
      [
        'audit',
        'caseId',
        'executed_nodes',
        'failed_nodes',
        'nb_executed_nodes',
        'nb_failed_nodes',
        'nb_nodes',
        'next_node_to_execute',
        'remaining_nodes_to_execute',
        'running_node',
        'status',
      ].sort(),
    );
    expect(a).toMatchObject({
      nb_nodes: 3,
      nb_executed_nodes: 3,
      running_node: '',
      next_node_to_execute: '',
      remaining_nodes_to_execute: [],
      failed_nodes: [],
      nb_failed_nodes: 0,
    });
    expect(Object.keys(a.audit.nodes_execution_data)).toHaveLength(3);
    // Bodies the document refuses: an unknown source, no workflow.
    expect(
      (await svc.request('POST', '/job/initiate', { body: { workflowId: wf.workflowId, source: 'fax' } })).status,
    ).toBe(400);
    expect((await svc.request('POST', '/job/initiate', { body: { title: 'no workflow' } })).status).toBe(400);
  });
});
