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
import { waitForEnd } from '../cases/support.js';
import { Graph, py } from '../support/graphs.js';
import { codeBody } from '../code/support.js';
import { startTestService, type TestResponse, type TestService } from '../support/harness.js';
import { newCaller } from '../support/keys.js';

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
  doc = (await svc.request('GET', '/openapi.json')).body as unknown as OpenApiDocument;
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await svc?.stop();
});

/** The response schema the served document gives for this operation and status, $ref resolved. */
function documented(method: string, path: string, status: number): JsonSchema {
  const schema = doc.paths[path]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} documents no ${status} body`);
  return schema.$ref ? (doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] ?? {}) : schema;
}

/**
 * What was sent is what is documented: the status, the body parsing with the route's response
 * schema, and exactly the top-level fields the served OpenAPI document lists for it.
 */
function expectDocumented(
  res: TestResponse,
  op: { method: string; path: string; status: number },
  schema: ZodType,
): void {
  expect(res.status, res.text).toBe(op.status);
  const parsed = schema.safeParse(res.body);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  expect(Object.keys(res.body).sort()).toEqual(
    Object.keys(documented(op.method, op.path, op.status).properties ?? {}).sort(),
  );
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
    const created = await svc.request('POST', '/api/v1/workflow', {
      headers: { 'x-workspace-id': svc.workspaceId },
      body: { name: 'shapes', activeStatus: 'inactive', nodes: g.nodes, edges: g.edges },
    });
    expectDocumented(created, { method: 'post', path: '/api/v1/workflow', status: 201 }, createdSchema);
    const id = String(created.body.workflowId);
    const one = '/api/v1/workflow/{workflowId}';
    expectDocumented(
      await svc.request('GET', `/api/v1/workflow/${id}`),
      { method: 'get', path: one, status: 200 },
      detailsSchema,
    );
    expectDocumented(
      await svc.request('PATCH', `/api/v1/workflow/${id}`, { body: { name: 'shapes v2' } }),
      { method: 'patch', path: one, status: 200 },
      updatedSchema,
    );
    const activated = await svc.request('POST', `/api/v1/workflow/${id}/activate`, {
      body: { workflowVersionNumber: 1 },
    });
    expectDocumented(activated, { method: 'post', path: `${one}/activate`, status: 200 }, statusResultSchema);
    expect(activated.body).toMatchObject({ activeStatus: 'active', activeVersionNumber: 1 });
    const deprecated = await svc.request('GET', `/workflow/${id}`);
    expectDocumented(
      deprecated,
      { method: 'get', path: '/workflow/{workflowId}', status: 200 },
      deprecatedDetailsSchema,
    );
    expect(deprecated.body.versionNumber).toBe(1);
    const deactivated = await svc.request('POST', `/api/v1/workflow/${id}/deactivate`, { body: {} });
    expectDocumented(deactivated, { method: 'post', path: `${one}/deactivate`, status: 200 }, statusResultSchema);
    expect(deactivated.body).toMatchObject({
      activeStatus: 'inactive',
      activeVersionId: null,
      activeVersionNumber: null,
    });
  });

  it('cases and callbacks: initiate, execute, status, results, audit, cancel, deliveries, redeliver, webhook secret', async () => {
    const hook = new Receiver();
    receivers.push(hook);
    const port = await hook.listen();
    const g = echo();
    const created = await svc.request('POST', '/api/v1/workflow', {
      headers: { 'x-workspace-id': svc.workspaceId },
      body: { name: 'case shapes', activeStatus: 'active', nodes: g.nodes, edges: g.edges },
    });
    const workflowId = String(created.body.workflowId);

    const initiated = await svc.request('POST', '/api/v1/case', { body: { workflowId } });
    expectDocumented(initiated, { method: 'post', path: '/api/v1/case', status: 201 }, initiatedSchema);
    const caseId = String(initiated.body.caseId);
    const executed = await svc.request('POST', `/api/v1/case/${caseId}/execute`, {
      body: { inputs: { text: 'hi' }, callbackUrl: `http://127.0.0.1:${port}/hook` },
    });
    expectDocumented(executed, { method: 'post', path: '/api/v1/case/{caseId}/execute', status: 202 }, executedSchema);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');

    const base = '/api/v1/case/{caseId}';
    expectDocumented(
      await svc.request('GET', `/api/v1/case/${caseId}/status`),
      { method: 'get', path: `${base}/status`, status: 200 },
      statusSchema,
    );
    const results = await svc.request('GET', `/api/v1/case/${caseId}/results`);
    expectDocumented(results, { method: 'get', path: `${base}/results`, status: 200 }, resultsBodySchema);
    expect(results.body).toMatchObject({ status: 'COMPLETED', results: { text: { value: 'hi' } } });
    expectDocumented(
      await svc.request('GET', `/api/v1/case/${caseId}/audit`),
      { method: 'get', path: `${base}/audit`, status: 200 },
      auditSchema,
    );
    const job = await svc.request('GET', `/job/${caseId}/status`);
    expectDocumented(job, { method: 'get', path: '/job/{jobExecutionId}/status', status: 200 }, jobStatusSchema);
    expect(job.body.jobExecutionId).toBe(caseId);
    const jobInitiated = await svc.request('POST', '/job/initiate', { body: { workflowId } });
    expectDocumented(jobInitiated, { method: 'post', path: '/job/initiate', status: 201 }, jobInitiatedSchema);
    const jobExecuted = await svc.request('POST', '/job/execute', {
      body: { jobExecutionId: jobInitiated.body.jobExecutionId, inputs: { text: 'job' } },
    });
    expectDocumented(jobExecuted, { method: 'post', path: '/job/execute', status: 202 }, jobExecutedSchema);
    expect(jobExecuted.body.jobExecutionId).toBe(jobInitiated.body.jobExecutionId);
    expect((await waitForEnd(svc, String(jobExecuted.body.jobExecutionId))).status).toBe('COMPLETED');

    const until = Date.now() + 20_000;
    let deliveries = await svc.request('GET', `/api/v1/case/${caseId}/callbacks`);
    while (
      (deliveries.body.deliveries as Array<{ status: string }> | undefined)?.[0]?.status !== 'delivered' &&
      Date.now() < until
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      deliveries = await svc.request('GET', `/api/v1/case/${caseId}/callbacks`);
    }
    expectDocumented(deliveries, { method: 'get', path: `${base}/callbacks`, status: 200 }, deliveriesSchema);
    expect((deliveries.body.deliveries as Array<{ attempts: unknown[] }>)[0]?.attempts).toHaveLength(1);
    const redelivered = await svc.request('POST', `/api/v1/case/${caseId}/callbacks/redeliver`);
    expectDocumented(
      redelivered,
      { method: 'post', path: `${base}/callbacks/redeliver`, status: 202 },
      redeliveryStartedSchema,
    );
    expect(redelivered.headers.get('ratelimit')).toBeTruthy();

    const secretPath = '/api/v1/workspace/{workspaceId}/webhook-secret';
    const secret = await svc.request('GET', `/api/v1/workspace/${svc.workspaceId}/webhook-secret`);
    expectDocumented(secret, { method: 'get', path: secretPath, status: 200 }, webhookSecretSchema);
    expect(secret.headers.get('cache-control')).toBe('no-store');
    const rotated = await svc.request('POST', `/api/v1/workspace/${svc.workspaceId}/webhook-secret/rotate`);
    expectDocumented(rotated, { method: 'post', path: `${secretPath}/rotate`, status: 200 }, webhookSecretSchema);
    expect(rotated.body.secret).not.toBe(secret.body.secret);

    const pending = String((await svc.request('POST', '/api/v1/case', { body: { workflowId } })).body.caseId);
    const cancelled = await svc.request('POST', `/api/v1/case/${pending}/cancel`);
    expectDocumented(cancelled, { method: 'post', path: `${base}/cancel`, status: 200 }, cancelledSchema);
    expect(cancelled.body.status).toBe('CANCELLED');
  });

  it('lists: workflows and cases, each item in its documented shape', async () => {
    const workflows = await svc.request('GET', '/api/v1/workflow?limit=2');
    expectDocumented(workflows, { method: 'get', path: '/api/v1/workflow', status: 200 }, workflowListSchema.strict());
    expect((workflows.body.workflows as unknown[]).length).toBeGreaterThan(0);
    const cases = await svc.request('GET', '/api/v1/case?limit=2');
    expectDocumented(cases, { method: 'get', path: '/api/v1/case', status: 200 }, caseListSchema.strict());
    expect((cases.body.cases as unknown[]).length).toBeGreaterThan(0);
  });

  it('code nodes: register and update', async () => {
    const author = await newCaller(svc, ['code:full']);
    const created = await svc.request('POST', '/api/v1/code', { key: author.key, body: codeBody() });
    expectDocumented(created, { method: 'post', path: '/api/v1/code', status: 201 }, codeNodeResponse);
    const updated = await svc.request('PATCH', `/api/v1/code/${String(created.body.id)}`, {
      key: author.key,
      body: { name: 'renamed' },
    });
    expectDocumented(updated, { method: 'patch', path: '/api/v1/code/{codeId}', status: 200 }, codeNodeResponse);
    expect(updated.body).toMatchObject({ name: 'renamed', versionNumber: 2, sourceCode: created.body.sourceCode });
  });
});

describe('the services refuse another organization', () => {
  it('hides or refuses every workflow, case, callback, secret and code node of this organization', async () => {
    const g = echo();
    const created = await svc.request('POST', '/api/v1/workflow', {
      headers: { 'x-workspace-id': svc.workspaceId },
      body: { name: 'not theirs', activeStatus: 'active', nodes: g.nodes, edges: g.edges },
    });
    const workflowId = String(created.body.workflowId);
    const caseId = String((await svc.request('POST', '/api/v1/case', { body: { workflowId } })).body.caseId);
    const author = await newCaller(svc, ['code:full']);
    const codeId = String((await svc.request('POST', '/api/v1/code', { key: author.key, body: codeBody() })).body.id);

    // Every grant, organization-wide, verified: only the organization differs.
    const attacker = await newCaller(svc, [
      'workflow:full',
      'case:full',
      'file:full',
      'code:full',
      'integration:full',
      'discovery:read',
    ]);
    const as = (method: string, path: string, body?: unknown) => svc.request(method, path, { key: attacker.key, body });
    const refused = async (res: Promise<TestResponse>, status: number) => {
      const r = await res;
      expect(r.status, r.text).toBe(status);
    };
    await refused(as('GET', `/api/v1/workflow/${workflowId}`), 403);
    await refused(as('PATCH', `/api/v1/workflow/${workflowId}`, { name: 'hijacked' }), 403);
    await refused(as('POST', `/api/v1/workflow/${workflowId}/deactivate`, {}), 403);
    await refused(as('GET', `/workflow/${workflowId}`), 403);
    // Naming the other organization's workflow to run it: it does not exist for this caller.
    await refused(as('POST', '/api/v1/case', { workflowId }), 404);
    await refused(as('GET', `/api/v1/case/${caseId}/status`), 404);
    await refused(as('POST', `/api/v1/case/${caseId}/execute`, { inputs: { text: 'x' } }), 404);
    await refused(as('POST', `/api/v1/case/${caseId}/cancel`), 404);
    await refused(as('GET', `/api/v1/case/${caseId}/callbacks`), 404);
    await refused(as('POST', `/api/v1/case/${caseId}/callbacks/redeliver`), 404);
    await refused(as('GET', `/api/v1/workspace/${svc.workspaceId}/webhook-secret`), 403);
    await refused(as('POST', `/api/v1/workspace/${svc.workspaceId}/webhook-secret/rotate`), 403);
    await refused(as('PATCH', `/api/v1/code/${codeId}`, { name: 'hijacked' }), 404);

    // Nothing changed behind the refusals.
    const workflow = await svc.request('GET', `/api/v1/workflow/${workflowId}`);
    expect(workflow.body).toMatchObject({ name: 'not theirs', activeStatus: 'active' });
    expect((await svc.request('GET', `/api/v1/case/${caseId}/status`)).body.status).toBe('PENDING');
    const code = await svc.request('PATCH', `/api/v1/code/${codeId}`, { key: author.key, body: { tags: ['mine'] } });
    expect(code.body).toMatchObject({ name: codeBody().name, versionNumber: 2 });
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
