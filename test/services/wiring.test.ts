import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import { deliveriesSchema, redeliveryStartedSchema, webhookSecretSchema } from '../../src/api/schemas/callbacks.js';
import {
  auditSchema,
  cancelledSchema,
  caseListSchema,
  executedSchema,
  initiatedSchema,
  jobExecutedSchema,
  jobInitiatedSchema,
  jobStatusSchema,
  resultsBodySchema,
  statusSchema,
} from '../../src/api/schemas/cases.js';
import { codeNodeResponse } from '../../src/api/schemas/code-nodes.js';
import {
  createdSchema,
  deprecatedDetailsSchema,
  detailsSchema,
  statusResultSchema,
  updatedSchema,
  workflowListSchema,
} from '../../src/api/schemas/workflows.js';
import { Receiver } from '../callbacks/receiver.js';
import { caseStatus, createWorkflow, initiate, waitForEnd } from '../cases/support.js';
import { Graph, py } from '../support/graphs.js';
import { codeBody } from '../code/support.js';
import {
  answered,
  refused,
  startTestService,
  type Reply,
  type StatusWithBody,
  type SuccessBody,
  type TestService,
} from '../support/harness.js';
import { clientFor, newCaller } from '../support/keys.js';

interface JsonSchema {
  $ref?: string;
  properties?: Record<string, unknown>;
  content?: Record<string, { schema: JsonSchema }>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, JsonSchema> }>>;
  components: { schemas: Record<string, JsonSchema> };
}

let svc: TestService;
let doc: OpenApiDocument;
const receivers: Receiver[] = [];

beforeAll(async () => {
  svc = await startTestService();
  // The served document itself is not a route of the document.
  doc = (await svc.request('GET', '/openapi.json')).body as unknown as OpenApiDocument;
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await svc?.stop();
});

/** The response schema the served document gives for this operation and status, $ref resolved. */
function documented(method: string, path: string, status: number | string): JsonSchema {
  const schema = doc.paths[path]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} documents no ${status} body`);
  return schema.$ref ? (doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] ?? {}) : schema;
}

/**
 * What was sent is what is documented: the status, the body parsing with the route's response
 * schema, and exactly the top-level fields the served OpenAPI document lists for it.
 */
async function expectDocumented<R extends Reply>(
  call: Promise<R>,
  op: { method: string; path: string; status: StatusWithBody<R> },
  schema: ZodType,
): Promise<{ body: SuccessBody<R>; headers: Headers }> {
  const { response } = await call;
  const body = await answered(call, op.status);
  const parsed = schema.safeParse(body);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  expect(Object.keys(body as object).sort()).toEqual(
    Object.keys(documented(op.method, op.path, op.status).properties ?? {}).sort(),
  );
  return { body, headers: response.headers };
}

/** input(text) → python → output(text) */
function echo(): Graph {
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const code = g.python('Echo', py('return {"text": inputs["text"]}'), [{ name: 'text' }], [{ name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  g.edge(input, code);
  g.edge(code, output);
  return g;
}

describe('services behind the routes answer in their documented shapes', () => {
  it('workflows: create, details, update, activate, deactivate, the deprecated details', async () => {
    const g = echo();
    const { body: created } = await expectDocumented(
      svc.client.POST('/api/v1/workflow', {
        params: { header: { 'x-workspace-id': svc.workspaceId } },
        body: { name: 'shapes', activeStatus: 'inactive', nodes: g.nodes, edges: g.edges },
      }),
      { method: 'post', path: '/api/v1/workflow', status: 201 },
      createdSchema,
    );
    const one = '/api/v1/workflow/{workflowId}';
    const onWorkflow = { params: { path: { workflowId: created.workflowId } } };
    await expectDocumented(svc.client.GET(one, onWorkflow), { method: 'get', path: one, status: 200 }, detailsSchema);
    await expectDocumented(
      svc.client.PATCH(one, { ...onWorkflow, body: { name: 'shapes v2' } }),
      { method: 'patch', path: one, status: 200 },
      updatedSchema,
    );
    const { body: activated } = await expectDocumented(
      svc.client.POST('/api/v1/workflow/{workflowId}/activate', { ...onWorkflow, body: { workflowVersionNumber: 1 } }),
      { method: 'post', path: `${one}/activate`, status: 200 },
      statusResultSchema,
    );
    expect(activated).toMatchObject({ activeStatus: 'active', activeVersionNumber: 1 });
    const { body: deprecated } = await expectDocumented(
      svc.client.GET('/workflow/{workflowId}', onWorkflow),
      { method: 'get', path: '/workflow/{workflowId}', status: 200 },
      deprecatedDetailsSchema,
    );
    expect(deprecated.versionNumber).toBe(1);
    const { body: deactivated } = await expectDocumented(
      svc.client.POST('/api/v1/workflow/{workflowId}/deactivate', { ...onWorkflow, body: {} }),
      { method: 'post', path: `${one}/deactivate`, status: 200 },
      statusResultSchema,
    );
    expect(deactivated).toMatchObject({
      activeStatus: 'inactive',
      activeVersionId: null,
      activeVersionNumber: null,
    });
  });

  it('cases and callbacks: initiate, execute, status, results, audit, cancel, deliveries, redeliver, webhook secret', async () => {
    const hook = new Receiver();
    receivers.push(hook);
    const port = await hook.listen();
    const { workflowId } = await createWorkflow(svc, echo(), 'case shapes');

    const { body: initiated } = await expectDocumented(
      svc.client.POST('/api/v1/case', { body: { workflowId } }),
      { method: 'post', path: '/api/v1/case', status: 201 },
      initiatedSchema,
    );
    const { caseId } = initiated;
    const onCase = { params: { path: { caseId } } };
    await expectDocumented(
      svc.client.POST('/api/v1/case/{caseId}/execute', {
        ...onCase,
        body: { inputs: { text: 'hi' }, callbackUrl: `http://127.0.0.1:${port}/hook` },
      }),
      { method: 'post', path: '/api/v1/case/{caseId}/execute', status: 202 },
      executedSchema,
    );
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');

    const base = '/api/v1/case/{caseId}';
    await expectDocumented(
      svc.client.GET('/api/v1/case/{caseId}/status', onCase),
      { method: 'get', path: `${base}/status`, status: 200 },
      statusSchema,
    );
    const { body: results } = await expectDocumented(
      svc.client.GET('/api/v1/case/{caseId}/results', onCase),
      { method: 'get', path: `${base}/results`, status: 200 },
      resultsBodySchema,
    );
    expect(results).toMatchObject({ status: 'COMPLETED', results: { text: { value: 'hi' } } });
    await expectDocumented(
      svc.client.GET('/api/v1/case/{caseId}/audit', onCase),
      { method: 'get', path: `${base}/audit`, status: 200 },
      auditSchema,
    );
    const { body: job } = await expectDocumented(
      svc.client.GET('/job/{jobExecutionId}/status', { params: { path: { jobExecutionId: caseId } } }),
      { method: 'get', path: '/job/{jobExecutionId}/status', status: 200 },
      jobStatusSchema,
    );
    expect(job.jobExecutionId).toBe(caseId);
    const { body: jobInitiated } = await expectDocumented(
      svc.client.POST('/job/initiate', { body: { workflowId } }),
      { method: 'post', path: '/job/initiate', status: 201 },
      jobInitiatedSchema,
    );
    const { body: jobExecuted } = await expectDocumented(
      svc.client.POST('/job/execute', {
        body: { jobExecutionId: jobInitiated.jobExecutionId, inputs: { text: 'job' } },
      }),
      { method: 'post', path: '/job/execute', status: 202 },
      jobExecutedSchema,
    );
    expect(jobExecuted.jobExecutionId).toBe(jobInitiated.jobExecutionId);
    expect((await waitForEnd(svc, jobExecuted.jobExecutionId)).status).toBe('COMPLETED');

    const deliveriesOf = () => svc.client.GET('/api/v1/case/{caseId}/callbacks', onCase);
    const until = Date.now() + 20_000;
    while ((await answered(deliveriesOf(), 200)).deliveries[0]?.status !== 'delivered' && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const { body: deliveries } = await expectDocumented(
      deliveriesOf(),
      { method: 'get', path: `${base}/callbacks`, status: 200 },
      deliveriesSchema,
    );
    expect(deliveries.deliveries[0]?.attempts).toHaveLength(1);
    const redelivered = await expectDocumented(
      svc.client.POST('/api/v1/case/{caseId}/callbacks/redeliver', onCase),
      { method: 'post', path: `${base}/callbacks/redeliver`, status: 202 },
      redeliveryStartedSchema,
    );
    expect(redelivered.headers.get('ratelimit')).toBeTruthy();

    const secretPath = '/api/v1/workspace/{workspaceId}/webhook-secret';
    const onWorkspace = { params: { path: { workspaceId: svc.workspaceId } } };
    const secret = await expectDocumented(
      svc.client.GET(secretPath, onWorkspace),
      { method: 'get', path: secretPath, status: 200 },
      webhookSecretSchema,
    );
    expect(secret.headers.get('cache-control')).toBe('no-store');
    const { body: rotated } = await expectDocumented(
      svc.client.POST('/api/v1/workspace/{workspaceId}/webhook-secret/rotate', onWorkspace),
      { method: 'post', path: `${secretPath}/rotate`, status: 200 },
      webhookSecretSchema,
    );
    expect(rotated.secret).not.toBe(secret.body.secret);

    const pending = await initiate(svc, { workflowId });
    const { body: cancelled } = await expectDocumented(
      svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId: pending } } }),
      { method: 'post', path: `${base}/cancel`, status: 200 },
      cancelledSchema,
    );
    expect(cancelled.status).toBe('CANCELLED');
  });

  it('lists: workflows and cases, each item in its documented shape', async () => {
    const { body: workflows } = await expectDocumented(
      svc.client.GET('/api/v1/workflow', { params: { query: { limit: 2 } } }),
      { method: 'get', path: '/api/v1/workflow', status: 200 },
      workflowListSchema.strict(),
    );
    expect(workflows.workflows.length).toBeGreaterThan(0);
    const { body: cases } = await expectDocumented(
      svc.client.GET('/api/v1/case', { params: { query: { limit: 2 } } }),
      { method: 'get', path: '/api/v1/case', status: 200 },
      caseListSchema.strict(),
    );
    expect(cases.cases.length).toBeGreaterThan(0);
  });

  it('code nodes: register and update', async () => {
    const author = clientFor(svc, (await newCaller(svc, ['code:full'])).key);
    const { body: created } = await expectDocumented(
      author.POST('/api/v1/code', { body: codeBody() }),
      { method: 'post', path: '/api/v1/code', status: 201 },
      codeNodeResponse,
    );
    const { body: updated } = await expectDocumented(
      author.PATCH('/api/v1/code/{codeId}', { params: { path: { codeId: created.id } }, body: { name: 'renamed' } }),
      { method: 'patch', path: '/api/v1/code/{codeId}', status: 200 },
      codeNodeResponse,
    );
    expect(updated).toMatchObject({ name: 'renamed', versionNumber: 2, sourceCode: created.sourceCode });
  });
});

describe('the services refuse another organization', () => {
  it('hides or refuses every workflow, case, callback, secret and code node of this organization', async () => {
    const { workflowId } = await createWorkflow(svc, echo(), 'not theirs');
    const caseId = await initiate(svc, { workflowId });
    const author = clientFor(svc, (await newCaller(svc, ['code:full'])).key);
    const { id: codeId } = await answered(author.POST('/api/v1/code', { body: codeBody() }), 201);

    // Every grant, organization-wide, verified: only the organization differs.
    const attacker = clientFor(
      svc,
      (
        await newCaller(svc, [
          'workflow:full',
          'case:full',
          'file:full',
          'code:full',
          'integration:full',
          'discovery:read',
        ])
      ).key,
    );
    const onWorkflow = { params: { path: { workflowId } } };
    const onCase = { params: { path: { caseId } } };
    const onWorkspace = { params: { path: { workspaceId: svc.workspaceId } } };
    await refused(attacker.GET('/api/v1/workflow/{workflowId}', onWorkflow), 403);
    await refused(attacker.PATCH('/api/v1/workflow/{workflowId}', { ...onWorkflow, body: { name: 'hijacked' } }), 403);
    await refused(attacker.POST('/api/v1/workflow/{workflowId}/deactivate', { ...onWorkflow, body: {} }), 403);
    await refused(attacker.GET('/workflow/{workflowId}', onWorkflow), 403);
    // Naming the other organization's workflow to run it: it does not exist for this caller.
    await refused(attacker.POST('/api/v1/case', { body: { workflowId } }), 404);
    await refused(attacker.GET('/api/v1/case/{caseId}/status', onCase), 404);
    await refused(attacker.POST('/api/v1/case/{caseId}/execute', { ...onCase, body: { inputs: { text: 'x' } } }), 404);
    await refused(attacker.POST('/api/v1/case/{caseId}/cancel', onCase), 404);
    await refused(attacker.GET('/api/v1/case/{caseId}/callbacks', onCase), 404);
    await refused(attacker.POST('/api/v1/case/{caseId}/callbacks/redeliver', onCase), 404);
    await refused(attacker.GET('/api/v1/workspace/{workspaceId}/webhook-secret', onWorkspace), 403);
    await refused(attacker.POST('/api/v1/workspace/{workspaceId}/webhook-secret/rotate', onWorkspace), 403);
    await refused(
      attacker.PATCH('/api/v1/code/{codeId}', { params: { path: { codeId } }, body: { name: 'hijacked' } }),
      404,
    );

    // Nothing changed behind the refusals.
    const workflow = await answered(svc.client.GET('/api/v1/workflow/{workflowId}', onWorkflow), 200);
    expect(workflow).toMatchObject({ name: 'not theirs', activeStatus: 'active' });
    expect((await caseStatus(svc, caseId)).status).toBe('PENDING');
    const code = await answered(
      author.PATCH('/api/v1/code/{codeId}', { params: { path: { codeId } }, body: { tags: ['mine'] } }),
      200,
    );
    expect(code).toMatchObject({ name: codeBody().name, versionNumber: 2 });
  });
});

describe('the composition root', () => {
  it('opens the secret box at start: a malformed master key stops the service instead of failing callbacks later', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-test-'));
    try {
      await expect(startTestService({ dataDir, config: { secrets: { masterKey: 'not a key' } } })).rejects.toThrow(
        /CASEFLOW_MASTER_KEY/,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
