import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { results, startCase, waitForEnd } from '../cases/support.js';
import {
  createProcess,
  expectError,
  patchProcess,
  processBody,
  snapshotProcess,
  type ProcessBody,
} from '../discovery/support.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { newCaller, newKey } from '../support/keys.js';
import {
  activate,
  connectErp,
  generate,
  integrationNodes,
  importInvoiceProcess,
  nodesOf,
  startGeneration,
  type ConnectedErp,
} from './process-support.js';

const item = (id: string, text: string) => ({ id, text });
/** A main-line step reading one text and making another. */
const textStep = (id: string, name: string, stepOrder: number, input: string, output: string) => ({
  id,
  name,
  stepOrder,
  inputs: [item(`${id}-in`, input)],
  outputs: [item(`${id}-out`, output)],
});

/** Three steps in a line: two the offline planner has rules for, one on the connected ERP. */
const ticketProcess: ProcessBody = {
  name: 'Ticket intake',
  description: 'How a support ticket is cleaned, measured and filed',
  processInputs: [item('pi-1', 'Ticket text')],
  processOutputs: [item('po-1', 'Word count'), item('po-2', 'Record id')],
  steps: [
    textStep('clean', 'Clean the ticket text', 1, 'Ticket text', 'Text'),
    textStep('count', 'Count the words', 2, 'Text', 'Word count'),
    { id: 'file', name: 'File the ticket', stepOrder: 3, integrations: [item('int-erp', 'erp  System')] },
  ],
  customEdges: [
    { id: 'e1', sourceStepId: 'clean', targetStepId: 'count' },
    { id: 'e2', sourceStepId: 'count', targetStepId: 'file' },
  ],
};

describe('generation from a discovered process with the offline planner', () => {
  let svc: TestService;
  let erp: ConnectedErp;
  beforeAll(async () => {
    svc = await startTestService();
    erp = await connectErp(svc);
  });
  afterAll(async () => {
    await erp?.server.close();
    await svc?.stop();
  });

  it('builds a linear process step by step: rules it knows, the ERP step as an integration action (completed, nothing called)', async () => {
    const processId = await createProcess(svc, ticketProcess);
    const { workflowId, run } = await generate(svc, { processId });
    expect(run, JSON.stringify(run.tasks_by_agent)).toMatchObject({
      status: 'completed',
      planner: 'offline',
      needs_attention: [],
      source_process: { processId, processVersionId: null, versionNumber: null, name: 'Ticket intake' },
    });
    expect(run.tasks_by_agent.find((t) => t.specialty === 'triage')).toMatchObject({ status: 'skipped' });
    const nodes = await nodesOf(svc, workflowId);
    expect(nodes.find((n) => n.name === 'File the ticket')).toMatchObject({
      handler_class: 'integration_action',
      process: { connection_id: erp.connectionId },
    });
    expect(nodes.filter((n) => n.handler_class === 'python_code').map((n) => n.name)).toEqual([
      'Clean the ticket text',
      'Count the words',
    ]);
    // The dry run ran the graph without calling the connected system.
    expect(erp.server.received).toHaveLength(0);

    // The workflow it made runs: text cleaned, words counted, the ticket filed in the ERP for real.
    await activate(svc, workflowId);
    const caseId = await startCase(svc, workflowId, { ticket_text: '  my   printer is   on fire ' });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const out = await results(svc, caseId);
    expect(out.word_count?.value).toBe(5);
    expect(out.record_id?.value).toBe('ERP-42');
    expect(erp.server.received.map((r) => JSON.parse(r.body) as unknown)).toEqual([{ text: 'my printer is on fire' }]);
  });

  it('round-trips the Camunda Modeler invoice process: user tasks as human tasks, the gateway as a condition, ERP steps as actions, the rest named (partial)', async () => {
    const processId = await importInvoiceProcess(svc);
    const calls = erp.server.received.length;
    const { workflowId, run } = await generate(svc, { processId });
    expect(run.status, JSON.stringify(run.tasks_by_agent)).toBe('partial');
    expect(run.applied_versions.map((v) => v.stage)).toEqual(['skeleton', 'final']);
    expect([...run.needs_attention].sort()).toEqual(
      ['Remind approver', 'Archive invoice', 'Notify supplier of rejection'].sort(),
    );
    const nodes = await nodesOf(svc, workflowId);
    // BPMN user tasks are a person's: human tasks with a decision that routes, no builder needed.
    const people = nodes.filter((n) => n.handler_class === 'human_task');
    expect(people.map((n) => n.name).sort()).toEqual(['Approve invoice', 'Check contract terms', 'Register invoice']);
    expect(people.find((n) => n.name === 'Approve invoice')?.process).toMatchObject({
      title: 'Approve invoice: {{ invoice_record }}',
      assignee: { type: 'workspace' },
    });
    expect(integrationNodes(nodes)).toEqual([
      ['Match purchase order', erp.connectionId],
      ['Pay supplier', erp.connectionId],
    ]);
    const condition = nodes.find((n) => n.handler_class === 'condition');
    expect(condition?.name).toBe('Approve invoice: Yes?');
    expect(JSON.stringify(condition?.process)).toContain('"approved"');
    const summaries = run.tasks_by_agent.map((t) => t.result_summary).join('\n');
    expect(summaries).toContain('The parallel branches after "Register invoice"');
    expect(summaries).toContain('The path from "Remind approver" back to "Approve invoice" is not kept');
    // The applied version validates (it was saved); the decision is the approver's, no longer a workflow input.
    const details = await answered(
      svc.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId } } }),
      200,
    );
    expect(Object.keys(details.jobPayloadSchema)).toContain('scanned_invoice');
    expect(Object.keys(details.jobPayloadSchema)).not.toContain('approved');
    expect(erp.server.received).toHaveLength(calls);
  });

  it('builds from the snapshot asked for and records it, however the process changed since', async () => {
    const processId = await createProcess(svc, ticketProcess);
    const { processVersionId } = await answered(snapshotProcess(svc, processId), 201);
    await answered(
      patchProcess(svc, processId, {
        name: 'Renamed',
        steps: [{ id: 'only', name: 'Reverse the text' }],
        customEdges: [],
      }),
      200,
    );
    const { workflowId, run } = await generate(svc, { processId, processVersionId });
    expect(run.source_process).toEqual({
      processId,
      processVersionId,
      versionNumber: 1,
      name: 'Ticket intake',
      processUpdatedAt: expect.any(String),
    });
    expect((await nodesOf(svc, workflowId)).map((n) => n.name)).toContain('Count the words');
  });

  it('leaves a step on an integration the workspace has not connected for a person, saying which', async () => {
    const processId = await createProcess(svc, {
      name: 'Lead capture',
      steps: [
        textStep('a', 'Trim the lead name', 1, 'Lead name', 'Name'),
        { id: 'b', name: 'Create the lead', stepOrder: 2, integrations: [item('crm', 'Salesforce')] },
      ],
    });
    const { run } = await generate(svc, { processId });
    expect(run.status).toBe('partial');
    expect(run.needs_attention).toEqual(['Create the lead']);
    expect(run.tasks_by_agent.map((t) => t.result_summary).join('\n')).toContain(
      'Step "Create the lead" needs attention: it uses Salesforce, and this workspace has no live connection',
    );
  });

  it('applies the discovery read’s rules to processId and processVersionId, for another organization too, changing nothing', async () => {
    const db = svc.service.context.store.db;
    const count = async () =>
      [
        (await db.selectFrom('workflows').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n,
        (await db.selectFrom('generation_runs').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n,
      ].map(Number);
    const before = await count();
    const mine = await createProcess(svc, processBody());
    const other = await createProcess(svc, processBody({ name: 'Other' }));
    const otherVersion = await answered(snapshotProcess(svc, other), 201);

    // Untyped: ids the contract refuses.
    const raw = (body: Record<string, unknown>) =>
      svc.request('POST', '/api/v1/workflow/generate', { body, headers: { 'x-workspace-id': svc.workspaceId } });
    expectError(await raw({ processId: 'not-a-uuid' }), 400, 'processId');
    expectError(await raw({ processId: mine, processVersionId: '42' }), 400, 'processVersionId');
    expectError(await startGeneration(svc, { processVersionId: otherVersion.processVersionId }), 400);
    expectError(await startGeneration(svc, {}), 400, 'prompt');
    expectError(await startGeneration(svc, { processId: randomUUID() }), 404);
    // A version of another process is as unknown as no version at all.
    expectError(await startGeneration(svc, { processId: mine, processVersionId: otherVersion.processVersionId }), 404);

    // Another organization's process: 403, whatever grants the caller holds here.
    const attacker = await newCaller(svc, ['discovery:full']);
    const theirs = await createProcess(svc, processBody({ name: 'Theirs' }), attacker);
    expectError(await startGeneration(svc, { processId: theirs }), 403);

    // Workflow: Full and Code: Full in the target workspace, but no Discovery: Read: 403.
    const noDiscovery = (await newKey(svc, ['workflow:full', 'code:full'])).key;
    expectError(await startGeneration(svc, { processId: mine }, { key: noDiscovery }), 403, 'Discovery');
    // Discovery: Read without Workflow: Full: 403 before the process is looked at.
    const readOnly = (await newKey(svc, ['discovery:read', 'code:full', 'workflow:read'])).key;
    expectError(await startGeneration(svc, { processId: mine }, { key: readOnly }), 403);

    expect(await count()).toEqual([before[0], before[1]]);
  });
});
