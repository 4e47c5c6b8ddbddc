import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CaseflowClient } from '../../src/client/index.js';
import {
  answered,
  startTestService,
  unendingRateWindowMs,
  type TestResponse,
  type TestService,
} from '../support/harness.js';
import { newCaller, newKey } from '../support/keys.js';
import { presign, upload } from '../files/support.js';
import { authorIntegration, connect, connection, historyText } from '../connections/support.js';
import { FakeLlm, goodBuilds, happyScript, stepOf } from './fake-llm.js';
import {
  finished,
  nodesOf,
  readRun,
  startGeneration,
  untilRun,
  type GenerateBody,
  type RunRecord,
} from './process-support.js';

const llmKey = 'sk-test-secret-llm-key-0123456789';
/** Per key and minute: room for the runs' polling with the default key; the 429 test exhausts a fresh key. */
const rateLimit = 300;

describe('generation runs with an OpenAI-compatible LLM', () => {
  let svc: TestService;
  /** The service's own key sent as a Bearer token. */
  let bearer: CaseflowClient;
  const llm = new FakeLlm();

  beforeAll(async () => {
    await llm.start();
    svc = await startTestService({
      config: {
        llm: { baseUrl: llm.url, apiKey: llmKey, timeoutMs: 3000 },
        generation: { rateLimitMax: rateLimit, rateLimitWindowMs: unendingRateWindowMs },
      },
    });
    bearer = createClient({ baseUrl: svc.url, headers: { authorization: `Bearer ${svc.key}` } });
  });
  afterAll(async () => {
    await svc?.stop();
    await llm.stop();
  });

  const start = (body: GenerateBody, key?: string) => startGeneration(svc, body, { key });
  const started = (body: GenerateBody) => answered(start(body), 202);
  const until = (workflowId: string, done: (run: RunRecord) => boolean, timeoutMs = 45_000) =>
    untilRun(svc, workflowId, done, { timeoutMs, client: bearer });
  const details = (workflowId: string, version?: number) =>
    answered(
      svc.client.GET('/api/v1/workflow/{workflowId}', {
        params: { path: { workflowId }, query: version === undefined ? {} : { version } },
      }),
      200,
    );
  const cancelRun = (workflowId: string, runId?: string, client: CaseflowClient = svc.client) =>
    client.POST('/api/v1/workflow/{workflowId}/run/cancel', {
      params: { path: { workflowId } },
      body: runId ? { runId } : {},
    });

  it('builds, validates, dry-runs and applies a workflow (completed), with tasks, tokens and Bearer auth', async () => {
    llm.script = happyScript();
    const res = await started({
      prompt: 'Route invoices: clean the vendor, if the amount is over 1000 ask for approval, otherwise approve',
    });
    const { workflowId, runId } = res;
    const run = await until(workflowId, finished);
    expect(run.status, JSON.stringify(run.tasks_by_agent)).toBe('completed');
    expect(run).toMatchObject({ run_id: runId, progress: 1, room_active: false, needs_attention: [] });
    expect(run.elapsed_ms).toBeGreaterThan(0);
    const specialties = run.tasks_by_agent.map((t) => t.specialty);
    expect(specialties).toEqual(expect.arrayContaining(['triage', 'architect', 'builder', 'reviewer', 'applier']));
    expect(run.tasks_by_agent.filter((t) => t.specialty === 'builder')).toHaveLength(4);
    expect(run.tasks_by_agent.every((t) => t.status === 'completed' && t.attempt === 1)).toBe(true);
    expect(run.tasks_by_agent.find((t) => t.specialty === 'architect')?.usage.total_tokens).toBe(500);
    expect(run.usage.total_tokens).toBe(150 + 500 + 4 * 150);
    expect(run.task_count).toBe(run.tasks_by_agent.length);
    expect(run.applied_versions.map((v) => v.stage)).toEqual(['skeleton', 'final']);

    // The result is the workflow's latest version, the same graph a hand-made workflow passes.
    const read = await details(workflowId);
    expect(read).toMatchObject({ version: { workflowVersionNumber: 3 } });
    const nodes = Object.values(read.nodes);
    expect(nodes.map((n) => n.handler_class).sort()).toEqual([
      'condition',
      'input',
      'output',
      'python_code',
      'python_code',
      'python_code',
    ]);

    // The LLM key went to the LLM only: never in the record nor in Temporal history.
    expect(llm.calls.every((c) => c.authorization === `Bearer ${llmKey}`)).toBe(true);
    expect(JSON.stringify(run)).not.toContain(llmKey);
    const history = await historyText(svc, `generation-${workflowId}`);
    expect(history).toContain('triage');
    expect(history).not.toContain(llmKey);
  });

  it('ends irrelevant quickly when triage says the prompt is no process', async () => {
    const plans = llm.count('plan');
    llm.script = happyScript((agent) =>
      agent === 'triage' ? { json: { relevant: false, reason: 'a joke request' } } : undefined,
    );
    const res = await started({ prompt: 'tell me a joke about cats' });
    const run = await until(res.workflowId, finished);
    expect(run.status).toBe('irrelevant');
    expect(run.progress).toBe(1);
    expect(llm.count('plan')).toBe(plans);
  });

  it("ends partial naming an asked-for action the LLM's plan left out, though every planned step dry-ran", async () => {
    // The plan (goodPlan) routes invoices; the prompt also asks to open a claim, which no step does.
    llm.script = happyScript((agent) =>
      agent === 'triage' ? { json: { relevant: false, reason: 'not sure this is a process' } } : undefined,
    );
    const res = await started({
      prompt:
        'Route invoices: clean the vendor, if the amount is over 1000 ask for approval, otherwise approve, then open a claim with the carrier',
    });
    const run = await until(res.workflowId, finished);
    expect(run.status).toBe('partial');
    expect(run.needs_attention).toEqual(['open a claim with the carrier']);
    const summaries = run.tasks_by_agent.map((t) => t.result_summary).join('\n');
    // The LLM's "irrelevant" does not stand for a prompt asking for work.
    expect(summaries).toContain('so it is built; the planner had said: not sure this is a process');
    expect(summaries).toContain('The plan has no step for "open a claim with the carrier"');
  });

  it('ends partial and names the step a builder could not fill', async () => {
    llm.script = happyScript((agent, request) =>
      agent === 'step_build' && stepOf(request) === 's4'
        ? {
            json: {
              source: null,
              match: null,
              rules: null,
              llm: null,
              action: null,
              unresolved: 'needs the ERP integration',
            },
          }
        : undefined,
    );
    const res = await started({ prompt: 'Route invoices by amount' });
    const run = await until(res.workflowId, finished);
    expect(run.status).toBe('partial');
    expect(run.needs_attention).toEqual(['Auto approve']);
    expect(run.tasks_by_agent.some((t) => t.result_summary.includes('needs the ERP integration'))).toBe(true);
    expect(run.applied_versions.map((v) => v.stage)).toEqual(['skeleton', 'final']);
  });

  it('retries malformed JSON and a 429 as activity retries', async () => {
    const seen = { triage: 0, plan: 0 };
    llm.script = happyScript((agent) => {
      if (agent === 'triage' && ++seen.triage === 1)
        return { raw: { status: 429, body: '{"error":"slow down"}', headers: { 'retry-after': '1' } } };
      if (agent === 'plan' && ++seen.plan === 1) return { content: '{"name": "broken' };
      return undefined;
    });
    const res = await started({ prompt: 'Route invoices by amount' });
    const run = await until(res.workflowId, finished, 50_000);
    expect(run.status).toBe('completed');
    expect(run.tasks_by_agent.find((t) => t.specialty === 'triage')?.attempt).toBe(2);
    expect(run.tasks_by_agent.find((t) => t.specialty === 'architect')?.attempt).toBe(2);
  });

  it('falls back to JSON mode where the server has no structured output', async () => {
    const modes: string[] = [];
    llm.script = happyScript((_agent, request) => {
      modes.push(request.response_format?.type ?? 'none');
      return request.response_format?.type === 'json_schema'
        ? { raw: { status: 400, body: '{"error":"response_format json_schema is not supported"}' } }
        : undefined;
    });
    const res = await started({ prompt: 'Route invoices by amount' });
    const run = await until(res.workflowId, finished);
    expect(run.status).toBe('completed');
    expect(modes.filter((m) => m === 'json_object').length).toBeGreaterThanOrEqual(6);
    expect(llm.calls.at(-1)?.request.messages[0]?.content).toContain('JSON schema');
  });

  it('leaves a step whose builder keeps failing for a person (partial), not the whole run', async () => {
    llm.script = happyScript((agent, request) =>
      agent === 'step_build' && stepOf(request) === 's1'
        ? { raw: { status: 400, body: '{"error":"context too long"}' } }
        : undefined,
    );
    const res = await started({ prompt: 'Route invoices by amount' });
    const run = await until(res.workflowId, finished);
    expect(run.status).toBe('partial');
    expect(run.needs_attention).toEqual(['Clean vendor']);
    expect(
      run.tasks_by_agent.find((t) => t.specialty === 'builder' && t.status === 'failed')?.result_summary,
    ).toContain('context too long');
  });

  it('fails on a refusal, which no retry can fix', async () => {
    llm.script = happyScript((agent) => (agent === 'triage' ? { refusal: 'I cannot help with that' } : undefined));
    const res = await started({ prompt: 'Route invoices by amount' });
    const run = await until(res.workflowId, finished);
    expect(run.status).toBe('failed');
    expect(run.tasks_by_agent.find((t) => t.specialty === 'triage')).toMatchObject({ status: 'failed', attempt: 1 });
    expect(run.tasks_by_agent.find((t) => t.specialty === 'triage')?.result_summary).toContain('refused');
  });

  it('sends a dry-run error back to the builder and completes after the fix', async () => {
    let s3Calls = 0;
    llm.script = happyScript((agent, request) => {
      if (agent !== 'step_build' || stepOf(request) !== 's3') return undefined;
      s3Calls += 1;
      if (s3Calls === 1)
        return {
          json: {
            ...(goodBuilds.s3 as object),
            source: 'def main(inputs):\n    raise ValueError("boom in approval")\n',
          },
        };
      expect(request.messages[1]?.content).toContain('boom in approval');
      return undefined;
    });
    const res = await started({ prompt: 'Route invoices by amount' });
    const run = await until(res.workflowId, finished);
    expect(run.status, JSON.stringify(run.tasks_by_agent)).toBe('completed');
    expect(s3Calls).toBe(2);
    expect(
      run.tasks_by_agent
        .filter((t) => t.specialty === 'reviewer')
        .some((t) => t.result_summary.includes('boom in approval')),
    ).toBe(true);
  });

  it('builds llm_agent and integration_action steps; the dry run calls the LLM node (the action answers sample values)', async () => {
    const integration = await authorIntegration(svc, svc.key);
    const credential = 'sk-echo-credential-for-generation-42';
    const connected = await answered(
      connect(
        svc,
        connection(integration, svc.workspaceId, { name: 'Echo desk', credentialData: { api_key: credential } }),
      ),
      201,
    );
    const connectionId = String(connected.activeIntegrationId);
    const plan = {
      name: 'Ticket desk',
      description: 'Classifies a ticket and echoes a note',
      inputs: [
        { name: 'ticket', type: 'str', description: 'The ticket', sample: '"My invoice is late"' },
        { name: 'text', type: 'str', description: 'A note', sample: '"noted"' },
      ],
      steps: [
        {
          id: 's1',
          name: 'Classify ticket',
          kind: 'llm_agent',
          description: 'Classify the ticket as billing, bug or question',
          inputs: ['ticket'],
          outputs: [{ name: 'category', type: 'str' }],
          branch_of: null,
          integration: null,
        },
        {
          id: 's2',
          name: 'Echo note',
          kind: 'integration_action',
          description: 'Echo the note with the Echo service',
          inputs: ['text'],
          outputs: [{ name: 'echo', type: 'str' }],
          branch_of: null,
          integration: null,
        },
      ],
      outputs: [
        { name: 'category', type: 'str' },
        { name: 'echo', type: 'str' },
      ],
    };
    const empty = { source: null, match: null, rules: null, llm: null, action: null, unresolved: null };
    const pick = { connection_id: connectionId, action_version_id: integration.actionVersionId };
    let s2Calls = 0;
    llm.script = happyScript((agent, request) => {
      if (agent === 'plan') return { json: plan };
      if (agent === 'node_output') return { json: { category: 'billing' } };
      if (agent !== 'step_build') return undefined;
      if (stepOf(request) === 's1')
        return {
          json: {
            ...empty,
            llm: { system_prompt: 'Classify support tickets.', user_template: 'Ticket: {{ ticket }}' },
          },
        };
      s2Calls += 1;
      const offered = JSON.parse(request.messages[1]?.content ?? '{}') as { tools?: Array<{ connection_id: string }> };
      expect(offered.tools?.map((t) => t.connection_id)).toEqual([connectionId]);
      // First an id the workspace does not have: the reviewer sends it back.
      return { json: { ...empty, action: s2Calls === 1 ? { ...pick, connection_id: randomUUID() } : pick } };
    });
    const res = await started({ prompt: 'Classify each ticket, then echo a note with the Echo service' });
    const workflowId = res.workflowId;
    const run = await until(workflowId, finished);
    expect(run.status, JSON.stringify(run.tasks_by_agent)).toBe('completed');
    expect(s2Calls).toBe(2);
    const summaries = run.tasks_by_agent.map((t) => t.result_summary).join('\n');
    expect(summaries).toContain("is not among the workspace's connected integrations");
    expect(summaries).toContain('Built step "Classify ticket" as an LLM agent node (llm_agent)');

    const architect = llm.calls.filter((c) => c.agent === 'plan').at(-1)?.request.messages[1]?.content ?? '';
    expect(architect).toContain('Connected integrations of the workspace');
    expect(architect).toContain('Echo service');
    expect(architect).not.toContain(connectionId);
    const dryRunCall = llm.calls.filter((c) => c.agent === 'node_output').at(-1)?.request;
    expect(dryRunCall?.messages).toEqual([
      { role: 'system', content: 'Classify support tickets.' },
      { role: 'user', content: 'Ticket: My invoice is late' },
    ]);
    expect(JSON.stringify(llm.calls)).not.toContain(credential);

    const nodes = await nodesOf(svc, workflowId);
    expect(nodes.find((n) => n.handler_class === 'integration_action')?.process).toEqual(pick);
    expect(nodes.find((n) => n.handler_class === 'llm_agent')?.process).toMatchObject({
      user_template: 'Ticket: {{ ticket }}',
    });
  });

  it('never saves a version naming a connection outside the workspace, even when the run ends partial', async () => {
    const integration = await authorIntegration(svc, svc.key);
    const foreign = randomUUID();
    const plan = {
      name: 'Echo desk',
      description: 'Echoes a note',
      inputs: [{ name: 'text', type: 'str', description: 'A note', sample: '"noted"' }],
      steps: [
        {
          id: 's1',
          name: 'Echo note',
          kind: 'integration_action',
          description: 'Echo the note with the Echo service',
          inputs: ['text'],
          outputs: [{ name: 'echo', type: 'str' }],
          branch_of: null,
          integration: null,
        },
      ],
      outputs: [{ name: 'echo', type: 'str' }],
    };
    const empty = { source: null, match: null, rules: null, llm: null, action: null, unresolved: null };
    llm.script = happyScript((agent) => {
      if (agent === 'plan') return { json: plan };
      if (agent !== 'step_build') return undefined;
      // Every answer names a connection the workspace does not have.
      return { json: { ...empty, action: { connection_id: foreign, action_version_id: integration.actionVersionId } } };
    });
    const res = await started({ prompt: 'Echo a note with the Echo service' });
    const workflowId = res.workflowId;
    const run = await until(workflowId, finished);
    expect(run.status, JSON.stringify(run.tasks_by_agent)).toBe('partial');
    expect(run.applied_versions.length).toBeGreaterThan(0);
    for (const applied of run.applied_versions) {
      const nodes = Object.values((await details(workflowId, applied.workflowVersionNumber)).nodes);
      expect(nodes.map((n) => n.process?.connection_id).filter(Boolean)).toEqual([]);
      // The final version holds the step as a placeholder saying why.
      if (applied === run.applied_versions.at(-1))
        expect(JSON.stringify(nodes)).toContain('is not among the workspace');
    }
  });

  it('cancels mid-run keeping the applied skeleton; a second cancel and a second start answer 404 / 409', async () => {
    llm.script = happyScript((agent) =>
      agent === 'step_build' ? { delayMs: 2500, then: { raw: { status: 503, body: 'busy' } } } : undefined,
    );
    const res = await started({ prompt: 'Route invoices by amount' });
    const workflowId = res.workflowId;
    const live = await until(
      workflowId,
      (run) => run.applied_versions.length === 1 && run.tasks_by_agent.some((t) => t.specialty === 'builder'),
    );
    expect(live.status).toBe('processing');
    expect(live.room_active).toBe(true);
    expect(live.progress).toBeGreaterThan(0);
    expect(live.progress).toBeLessThan(1);
    expect(live.instances.live.busy).toBe(true);

    const again = await start({ prompt: 'again', workflowId });
    expect(again.response.status, JSON.stringify(again.error)).toBe(409);

    const cancel = await answered(cancelRun(workflowId, undefined, bearer), 200);
    expect(cancel).toEqual({ cancelled: true, run_id: live.run_id, workflow_id: workflowId });
    expect((await cancelRun(workflowId, live.run_id)).response.status).toBe(404);
    const run = await until(workflowId, (r) => r.status === 'cancelled' && !r.room_active);
    expect(run.progress).toBe(1);
    const final = await until(workflowId, (r) => !r.tasks_by_agent.some((t) => t.status === 'running'));
    expect(final.tasks_by_agent.some((t) => t.status === 'cancelled')).toBe(true);
    expect(await details(workflowId)).toMatchObject({ version: { workflowVersionNumber: 2 } });
  });

  it('closes a run whose workflow was terminated as failed instead of leaving it processing', async () => {
    llm.script = happyScript((agent) =>
      agent === 'step_build' ? { delayMs: 2500, then: { raw: { status: 503, body: 'busy' } } } : undefined,
    );
    const res = await started({ prompt: 'Route invoices by amount' });
    const workflowId = res.workflowId;
    await until(workflowId, (run) => run.tasks_by_agent.some((t) => t.specialty === 'builder'));
    await svc.service.context.temporal.client.workflow.getHandle(`generation-${workflowId}`).terminate('operator test');
    const run = await until(workflowId, finished);
    expect(run).toMatchObject({ status: 'failed', room_active: false, progress: 1 });
    expect(run.tasks_by_agent.at(-1)?.result_summary).toContain('TERMINATED');
    // A new run may start now; the version that runs stays the active one until someone activates the result.
    await answered(
      svc.client.POST('/api/v1/workflow/{workflowId}/activate', {
        params: { path: { workflowId } },
        body: { workflowVersionNumber: 1 },
      }),
      200,
    );
    llm.script = happyScript();
    await started({ prompt: 'Route invoices by amount', workflowId });
    const rebuilt = await until(workflowId, finished);
    expect(rebuilt.status).toBe('completed');
    expect(await details(workflowId)).toMatchObject({
      activeVersion: { workflowVersionNumber: 1 },
      latestVersion: {
        workflowVersionNumber: rebuilt.applied_versions.at(-1)?.workflowVersionNumber,
        status: 'inactive',
      },
    });
  });

  it('applies every 400/401/403/404 rule, for another organization too', async () => {
    llm.script = happyScript();
    const res = await started({ prompt: 'Route invoices by amount' });
    const { workflowId, runId } = res;
    await until(workflowId, finished);
    const other = await newCaller(svc, ['workflow:full'], { verified: false });
    const as = (key: string) => createClient({ baseUrl: svc.url, key });
    const expectStatus = (r: TestResponse | { response: Response; error?: unknown }, status: number) =>
      'response' in r
        ? expect(r.response.status, JSON.stringify(r.error)).toBe(status)
        : expect(r.status, r.text).toBe(status);
    const run = (id: string, query: { runId?: string; client?: CaseflowClient } = {}) =>
      readRun(svc, id, query.runId, query.client);
    // Untyped: no key, and ids the contract refuses.
    expectStatus(await svc.request('GET', `/api/v1/workflow/${workflowId}/run`, { key: null }), 401);
    expectStatus(await svc.request('GET', `/api/v1/workflow/not-a-uuid/run`), 400);
    expectStatus(await svc.request('GET', `/api/v1/workflow/${workflowId}/run?runId=nope`), 400);
    expectStatus(await run(workflowId, { runId: randomUUID() }), 404);
    expectStatus(await run(randomUUID()), 404);
    expectStatus(await run(workflowId, { runId }), 200);
    expectStatus(await run(workflowId, { client: as(other.key) }), 403);
    expectStatus(await cancelRun(workflowId, undefined, as(other.key)), 403);
    expectStatus(
      await svc.request('POST', `/api/v1/workflow/${workflowId}/run/cancel`, { body: { runId: 'bad' } }),
      400,
    );
    expectStatus(await cancelRun(workflowId), 404);
    const reader = (await newKey(svc, ['workflow:read'])).key;
    expectStatus(await run(workflowId, { client: as(reader) }), 200);
    expectStatus(await cancelRun(workflowId, undefined, as(reader)), 403);
    expectStatus(await start({ prompt: 'x y z w' }, reader), 403);
    const noCode = (await newKey(svc, ['workflow:full'])).key;
    expectStatus(await start({ prompt: 'Route invoices by amount' }, noCode), 403);
    // Another organization cannot rebuild this workflow, from its own workspace or from ours.
    const generateIn = (workspaceId: string, body: GenerateBody, key?: string) =>
      startGeneration(svc, body, { workspaceId, key });
    const theirs = await generateIn(other.workspaceId, { prompt: 'Route invoices', workflowId }, other.key);
    expect([403, 404]).toContain(theirs.response.status);
    expectStatus(await generateIn(svc.workspaceId, { prompt: 'Route invoices' }, other.key), 403);
    expectStatus(
      await svc.request('POST', '/api/v1/workflow/generate', {
        body: { prompt: 'Route invoices' },
        headers: { 'x-workspace-id': 'nope' },
      }),
      400,
    );
    expectStatus(await generateIn(randomUUID(), { prompt: 'Route invoices' }), 404);
    // Access is checked before the body: a bad body from a key without access is 403, from one with access 400.
    expectStatus(
      await svc.request('POST', '/api/v1/workflow/generate', {
        body: { prompt: '' },
        key: other.key,
        headers: { 'x-workspace-id': svc.workspaceId },
      }),
      403,
    );
    expectStatus(
      await svc.request('POST', '/api/v1/workflow/generate', {
        body: { prompt: '' },
        headers: { 'x-workspace-id': svc.workspaceId },
      }),
      400,
    );
    expectStatus(
      await svc.request('POST', '/api/v1/workflow/generate', {
        body: { prompt: 'x', workflowId: 'nope' },
        headers: { 'x-workspace-id': svc.workspaceId },
      }),
      400,
    );
  });

  it('gives readable files to the agents and skips the others with a note, without failing the run', async () => {
    llm.script = happyScript();
    const file = await presign(svc, { fileExtension: '.csv', accessScope: 'workspace', workspaceId: svc.workspaceId });
    expect((await upload(file.presignedUrl, Buffer.from('vendor,amount\nacme,1500\n'))).status).toBeLessThan(300);
    const foreign = `${svc.url}/api/v1/file/${randomUUID()}`;
    const planCalls = llm.count('plan');
    const res = await started({
      prompt: 'Route invoices by amount',
      fileUrls: [file.fileUrl, foreign, 'https://example.com/x.pdf'],
    });
    const run = await until(res.workflowId, finished);
    expect(run.status).toBe('completed');
    const skipped = run.tasks_by_agent.filter((t) => t.specialty === 'file_reader' && t.status === 'skipped');
    expect(skipped).toHaveLength(2);
    expect(skipped[0]?.result_summary).toContain(foreign);
    const architect = llm.calls.filter((c) => c.agent === 'plan')[planCalls];
    expect(architect?.request.messages[1]?.content).toContain('acme,1500');
  });

  it('answers 401 once the key’s user has left the organization', async () => {
    const member = await newKey(svc, ['workflow:full', 'code:full']);
    const memberClient = createClient({ baseUrl: svc.url, key: member.key });
    const memberBearer = createClient({ baseUrl: svc.url, headers: { authorization: `Bearer ${member.key}` } });
    expect((await readRun(svc, randomUUID(), undefined, memberClient)).response.status).toBe(404);
    expect(
      (await svc.admin('DELETE', `/admin/organizations/${svc.organizationId}/members/${member.userId}`)).status,
    ).toBeLessThan(300);
    expect((await readRun(svc, randomUUID(), undefined, memberClient)).response.status).toBe(401);
    expect((await cancelRun(randomUUID(), undefined, memberBearer)).response.status).toBe(401);
  });

  it('limits requests per key across the generation endpoints (429 with Retry-After and RateLimit)', async () => {
    const client = createClient({ baseUrl: svc.url, key: (await newKey(svc, ['workflow:read'])).key });
    const workflowId = randomUUID();
    let last: Response | undefined;
    for (let i = 0; i <= rateLimit; i++) last = (await readRun(svc, workflowId, undefined, client)).response;
    expect(last?.status).toBe(429);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last?.headers.get('ratelimit')).toMatch(/r=0/);
    // Another key has its own window.
    const fresh = createClient({ baseUrl: svc.url, key: (await newKey(svc, ['workflow:read'])).key });
    const other = (await readRun(svc, workflowId, undefined, fresh)).response;
    expect(other.status).toBe(404);
    expect(other.headers.get('ratelimit')).toMatch(new RegExp(`r=${rateLimit - 1};`));
  });
});
