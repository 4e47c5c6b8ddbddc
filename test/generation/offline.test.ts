import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { presign, upload } from '../files/support.js';
import { authorIntegration, connect, connection } from '../connections/support.js';
import { defaultPayloadConverter } from '@temporalio/common';
import { searchAttributes } from '../../src/temporal/contracts/search-attributes.js';
import { caseRunRevision } from '../../src/domain/case-run-changes.js';
import type { CaseRunInput } from '../../src/domain/cases.js';
import { newCaller, newWorkspace } from '../support/keys.js';
import { generate as generateRun, nodesOf as nodesOfWorkflow } from './process-support.js';

/** A fresh install: no LLM configured, the offline planner builds what it honestly can. */
describe('generation with the offline planner', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const generate = (prompt: string, fileUrls: string[] = [], workspaceId = svc.workspaceId) =>
    generateRun(svc, { prompt, fileUrls }, { workspaceId });
  const details = (workflowId: string) =>
    answered(svc.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId } } }), 200);
  const nodesOf = (workflowId: string) => nodesOfWorkflow(svc, workflowId);

  /**
   * The dry run's case run was started as the API starts one: with this code's revision (so it records no patch
   * marker) and the case workflow-task timeout (config temporal.caseWorkflowTaskTimeoutMs, 60 s), not Temporal's 10 s.
   */
  async function expectDryRunStartedAsACase(workflowId: string): Promise<void> {
    const { client, codec } = svc.service.context.temporal;
    const generation = await client.workflow.getHandle(`generation-${workflowId}`).fetchHistory();
    const dryRuns = (generation.events ?? [])
      .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)
      .filter((child) => child?.workflowType?.name === 'caseRun');
    expect(dryRuns.length).toBeGreaterThan(0);
    for (const dryRun of dryRuns) {
      const child = client.workflow.getHandle(String(dryRun?.workflowId));
      const { raw } = await child.describe();
      expect(Number(raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds)).toBe(60);
      const events = (await child.fetchHistory()).events ?? [];
      const [input] = await codec.decode(events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? []);
      expect(input && defaultPayloadConverter.fromPayload<CaseRunInput>(input).revision).toBe(caseRunRevision);
      expect(events.map((e) => e.markerRecordedEventAttributes?.markerName)).not.toContain('core_patch');
    }
  }

  it('builds a branching workflow it has rules for, which validates and dry-runs (completed) as a case run', async () => {
    const { workflowId, run } = await generate(
      'Given a support ticket, clean the text, then count the words. If the word count is over 200, escalate the ticket.',
    );
    expect(run).toMatchObject({
      status: 'completed',
      planner: 'offline',
      progress: 1,
      needs_attention: [],
      usage: { total_tokens: 0 },
    });
    const read = await details(workflowId);
    const nodes = Object.values(read.nodes);
    expect(nodes.filter((n) => n.handler_class === 'condition')).toHaveLength(1);
    expect(nodes.find((n) => String(n.process?.source).includes('split()'))).toBeDefined();
    expect(Object.keys(read.jobPayloadSchema)).toContain('word_count');
    // Found in the Temporal UI by organization, workspace and workflow.
    const described = await svc.service.context.temporal.client.workflow
      .getHandle(`generation-${workflowId}`)
      .describe();
    expect(described.typedSearchAttributes.get(searchAttributes.organizationId)).toBe(svc.organizationId);
    expect(described.typedSearchAttributes.get(searchAttributes.workspaceId)).toBe(svc.workspaceId);
    expect(described.typedSearchAttributes.get(searchAttributes.workflowId)).toBe(workflowId);
    await expectDryRunStartedAsACase(workflowId);
  });

  it('ends partial and names the steps it cannot fill without an LLM or an integration', async () => {
    const { run } = await generate('Given a contract text, extract the email addresses, then store them in the CRM.');
    expect(run.status).toBe('partial');
    expect(run.needs_attention).toEqual(['store them in the CRM']);
    expect(run.applied_versions.map((v) => v.stage)).toEqual(['skeleton', 'final']);
    expect(
      run.tasks_by_agent.some((t) => t.specialty === 'builder' && t.result_summary.includes('configure an LLM')),
    ).toBe(true);
  });

  it('ends partial naming what it could not build of the invoice prompt, with a file input and the condition', async () => {
    const { workflowId, run } = await generate(
      'When a customer sends an invoice PDF, extract the total amount and the due date, and if the total is above 10000 send it for manager approval, otherwise mark it approved.',
    );
    expect(run.status).toBe('partial');
    expect(run.needs_attention).toContain('read invoice');
    expect(run.needs_attention).not.toContain('send it for manager approval');
    const nodes = await nodesOf(workflowId);
    expect(nodes.filter((n) => n.handler_class === 'condition')).toHaveLength(1);
    expect(nodes.find((n) => n.handler_class === 'human_task')).toMatchObject({
      type: 'human_task',
      name: 'send it for manager approval',
    });
    const input = nodes.find((n) => n.handler_class === 'input');
    expect(JSON.stringify(input?.output_schema)).toContain('"allowed_file_types","value":["PDF"]');
  });

  it('never calls work irrelevant, and ends partial naming a condition it cannot read', async () => {
    const summary = await generate('Summarize a meeting transcript into action items with owners and due dates.');
    expect(summary.run.status).toBe('partial');
    const claim = await generate(
      'Given an order id, fetch the order, and if it shipped more than 10 days ago without delivery, open a claim with the carrier.',
    );
    expect(claim.run.status).toBe('partial');
    expect(claim.run.needs_attention).toEqual(
      expect.arrayContaining([
        'fetch the order',
        'if it shipped more than 10 days ago without delivery',
        'open a claim with the carrier',
      ]),
    );
  });

  it('builds language work as an llm_agent node that needs an LLM at run time: partial, saying so', async () => {
    const { workflowId, run } = await generate(
      'Given a customer email, summarize the email, then count the words of the summary.',
    );
    expect(run.status).toBe('partial');
    expect(run.needs_attention).toEqual(['summarize the email']);
    const builders = run.tasks_by_agent.filter((t) => t.specialty === 'builder');
    // Built once: a missing LLM is no builder's fault, so the step is not sent back.
    expect(builders).toHaveLength(2);
    expect(builders.map((t) => t.result_summary).join('\n')).toContain(
      'Built step "summarize the email" as an LLM agent node (llm_agent); it needs an LLM at run time, and none is configured',
    );
    const review = run.tasks_by_agent.filter((t) => t.specialty === 'reviewer').map((t) => t.result_summary);
    expect(review.join('\n')).toContain(
      'stopped at "summarize the email": it needs an LLM at run time and none is configured (LLM_BASE_URL)',
    );
    const agent = (await nodesOf(workflowId)).find((n) => n.handler_class === 'llm_agent');
    expect(agent).toMatchObject({ type: 'agent', name: 'summarize the email' });
    expect(agent?.process?.user_template).toContain('{{ customer_email }}');
    expect(agent?.process?.system_prompt).toContain('summarize the email');
  });

  it("uses an action of an integration the workspace has connected, and no other workspace's connection", async () => {
    const integration = await authorIntegration(svc, svc.key);
    const res = await answered(
      connect(svc, connection(integration, svc.workspaceId, { name: 'Echo for tickets' })),
      201,
    );
    const connectionId = String(res.activeIntegrationId);
    const prompt = 'Given a text, trim the text, then send it with the Echo service.';

    const { workflowId, run } = await generate(prompt);
    expect(run.status, JSON.stringify(run.tasks_by_agent)).toBe('completed');
    expect(
      run.tasks_by_agent.some((t) =>
        t.result_summary.includes('as an integration action (integration_action) of a connected integration'),
      ),
    ).toBe(true);
    const action = (await nodesOf(workflowId)).find((n) => n.handler_class === 'integration_action');
    expect(action).toMatchObject({
      type: 'action',
      process: { connection_id: connectionId, action_version_id: integration.actionVersionId },
    });

    // Another workspace of the same organization has no connection: nothing of this one is offered there.
    const other = await newWorkspace(svc);
    const elsewhere = await generate(prompt, [], other);
    expect(elsewhere.run.status).toBe('partial');
    expect(elsewhere.run.needs_attention).toEqual(['send it with the Echo service']);
    expect((await nodesOf(elsewhere.workflowId)).some((n) => n.handler_class === 'integration_action')).toBe(false);
  });

  it('documents the three endpoints with every status they answer', async () => {
    const doc = (await svc.request('GET', '/openapi.json', { key: null })).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(Object.keys(doc.paths['/api/v1/workflow/generate']?.post?.responses ?? {}).sort()).toEqual([
      '202',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '429',
      '503',
    ]);
    expect(Object.keys(doc.paths['/api/v1/workflow/{workflowId}/run']?.get?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '429',
    ]);
    expect(Object.keys(doc.paths['/api/v1/workflow/{workflowId}/run/cancel']?.post?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '413',
      '429',
    ]);
  });

  it('ends irrelevant for a prompt that is no process', async () => {
    const { run } = await generate('What is the capital of France?');
    expect(run.status).toBe('irrelevant');
    expect(run.applied_versions).toEqual([]);
  });

  it('reads a text file of the workspace and skips another organization’s, with a note', async () => {
    const mine = await presign(svc, { fileExtension: '.txt', accessScope: 'workspace', workspaceId: svc.workspaceId });
    expect((await upload(mine.presignedUrl, Buffer.from('invoice total 1200 EUR'))).status).toBeLessThan(300);
    // A file of another organization, uploaded with that organization's own key.
    const them = await newCaller(svc, ['file:full'], { verified: false });
    const theirs = await presign(
      svc,
      { fileExtension: '.txt', accessScope: 'workspace', workspaceId: them.workspaceId },
      them.key,
    );
    expect((await upload(theirs.presignedUrl, Buffer.from('their secret numbers 1 2 3'))).status).toBeLessThan(300);
    const foreignUrl = theirs.fileUrl;
    const { run } = await generate('Given an invoice text, extract the amounts, then sum the amounts.', [
      mine.fileUrl,
      foreignUrl,
    ]);
    expect(run.status).toBe('completed');
    const reader = run.tasks_by_agent.filter((t) => t.specialty === 'file_reader');
    expect(reader.find((t) => t.status === 'completed')?.result_summary).toBe('Read 1 file(s)');
    expect(reader.find((t) => t.status === 'skipped')?.result_summary).toContain(foreignUrl);
  });
});
