import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { field } from '../catalog/support.js';
import { audit, createWorkflow, results, startCase, waitForEnd } from '../cases/support.js';
import { Graph, vars, type Var } from '../support/graphs.js';
import { clientFor, newCaller, newWorkspace } from '../support/keys.js';
import { createLogger } from '../../src/logging/logger.js';
import { WorkflowRepo } from '../../src/store/workflow-repo.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import {
  authorIntegration,
  connect,
  connection,
  expectRefused,
  historyText,
  localServer,
  type Integration,
  type LocalServer,
} from './support.js';

const secret = 'sk-live-action-9f8e7d6c5b4a';
const code = [
  'import json',
  'import urllib.request',
  "request = urllib.request.Request(input_data['url'], headers={'X-API-Key': credential_value['api_key']})",
  'with urllib.request.urlopen(request, timeout=5) as answer:',
  '    data = json.loads(answer.read().decode())',
  "if input_data['text'] == 'boom':",
  "    raise RuntimeError('upstream said no to ' + credential_value['api_key'])",
  "print('using', credential_value['api_key'])",
  "result['echo'] = data['greeting'] + ' ' + input_data['text']",
  "result['leak'] = credential_value['api_key']",
  '',
].join('\n');

const logLines: string[] = [];
let svc: TestService;
let api: LocalServer;
let integration: Integration;
let connectionId: string;
/** The connect answer, searched for the secret with every other response. */
let connectText: string;

beforeAll(async () => {
  svc = await startTestService({
    logger: createLogger('debug', {}, 'json', { write: (line: string) => void logLines.push(line) }),
  });
  api = await localServer((req, res) => {
    if (req.headers['x-api-key'] !== secret) res.writeHead(401).end('{"error":"bad key"}');
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"greeting":"hello"}');
  });
  integration = await authorIntegration(svc, svc.key, {
    endpoint: `${api.url}/hello`,
    code,
    outputs: { echo: field('echo'), leak: field('leak') },
  });
  const res = await answered(
    connect(
      svc,
      connection(integration, svc.workspaceId, {
        credentialData: { api_key: secret },
        testActionVersionId: integration.actionVersionId,
      }),
    ),
    201,
  );
  expect(res.testPassed).toBe(true);
  connectionId = String(res.activeIntegrationId);
  connectText = JSON.stringify(res);
});
afterAll(async () => {
  await api?.close();
  await svc?.stop();
});

const nodeInputs: Var[] = [{ name: 'text' }, { name: 'url' }];

function actionGraph(connection: string, actionVersionId = integration.actionVersionId): Graph {
  const g = new Graph();
  const input = g.input(nodeInputs);
  const node = g.node({
    name: 'Say hello',
    type: 'action',
    handler_class: 'integration_action',
    process: { connection_id: connection, action_version_id: actionVersionId },
    input_schema: vars(nodeInputs),
    output_schema: vars([{ name: 'echo' }, { name: 'leak' }]),
  });
  const output = g.output([{ name: 'echo' }, { name: 'leak' }]);
  g.edge(input, node);
  g.edge(node, output);
  return g;
}

/** Saves the graph as a workflow of `workspaceId`, calling as `key`. */
function save(graph: Graph, key = svc.key, workspaceId = svc.workspaceId) {
  return clientFor(svc, key).POST('/api/v1/workflow', {
    params: { header: { 'x-workspace-id': workspaceId } },
    body: { name: 'x', nodes: graph.nodes, edges: graph.edges },
  });
}

/** Runs a case of the workflow, expects it to fail, and returns its nodes' errors. */
async function failedNodeErrors(workflowId: string) {
  const caseId = await startCase(svc, workflowId, { text: 'x', url: `${api.url}/hello` });
  expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
  return Object.values((await audit(svc, caseId)).audit.nodes_execution_data).flatMap((n) =>
    n.error ? [n.error] : [],
  );
}

/** A workflow stored without the save-time check, as if it got past it. */
async function storedWorkflow(
  organizationId: string,
  workspaceId: string,
  createdBy: string,
  graph: Graph,
): Promise<string> {
  const created = await new WorkflowRepo(svc.service.context.store.db).create({
    organizationId,
    workspaceId,
    name: 'bypass',
    createdBy,
    graph: { nodes: graph.nodes, edges: graph.edges },
    activeStatus: 'active',
    orgUnitIds: [],
  });
  return created.workflow.id;
}

describe('integration_action nodes', () => {
  it('runs the action: it calls a local API with the credential and returns its data; the secret is nowhere', async () => {
    const wf = await createWorkflow(svc, actionGraph(connectionId), 'hello');
    const caseId = await startCase(svc, wf.workflowId, { text: 'world', url: `${api.url}/hello` });
    const status = await waitForEnd(svc, caseId);
    expect(status.status, JSON.stringify(status)).toBe('COMPLETED');
    const out = await results(svc, caseId);
    expect(out.echo?.value).toBe('hello world');
    expect(out.leak?.value).toBe('[redacted]');
    expect(api.received.at(-1)?.headers['x-api-key']).toBe(secret);

    const auditText = JSON.stringify(await audit(svc, caseId));
    expect(auditText).toContain('using [redacted]');
    const history = await historyText(svc, `case-${caseId}`);
    expect(history).toContain('integration_action');
    expect(history).toContain('hello world');
    expect(logLines.length).toBeGreaterThan(10);
    const reads = await Promise.all([
      answered(svc.client.GET('/api/v1/connection/{connectionId}', { params: { path: { connectionId } } }), 200),
      answered(
        svc.client.GET('/api/v1/workspace/{workspaceId}/connections', {
          params: { path: { workspaceId: svc.workspaceId } },
        }),
        200,
      ),
      answered(
        svc.client.GET('/api/v1/integration/{integrationId}', { params: { path: { integrationId: integration.id } } }),
        200,
      ),
    ]);
    const smokeHistory = await historyText(svc, `connection-smoke-${connectionId}`);
    expect(smokeHistory).toContain(connectionId);
    const responses = [
      connectText,
      ...reads.map((r) => JSON.stringify(r)),
      auditText,
      JSON.stringify(status),
      JSON.stringify(out),
      history,
      smokeHistory,
      logLines.join('\n'),
    ];
    for (const text of responses) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(Buffer.from(secret).toString('base64'));
    }
    for (const file of readdirSync(svc.dataDir).filter((f) => f.startsWith('caseflow.db'))) {
      expect(readFileSync(path.join(svc.dataDir, file)).includes(secret), file).toBe(false);
    }
  });

  it('an exception in the action fails the node with kind action, the secret redacted from the error', async () => {
    const wf = await createWorkflow(svc, actionGraph(connectionId), 'boom');
    const caseId = await startCase(svc, wf.workflowId, { text: 'boom', url: `${api.url}/hello` });
    expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
    const record = await audit(svc, caseId);
    const errors = Object.values(record.audit.nodes_execution_data).flatMap((n) => (n.error ? [n.error] : []));
    expect(errors[0]).toMatchObject({ kind: 'action' });
    expect(JSON.stringify(errors)).toContain('upstream said no to [redacted]');
    expect(JSON.stringify(record)).not.toContain(secret);
  });

  it("refuses at save a connection of another workspace or organization, an unknown one, or another integration's action", async () => {
    const other = await newWorkspace(svc);
    const elsewhere = await answered(
      connect(svc, connection(integration, other, { credentialData: { api_key: 'sk-other-workspace' } })),
      201,
    );
    const second = await authorIntegration(svc, svc.key);
    const attacker = await newCaller(svc, ['integration:full', 'workflow:full']);
    const attackerWorkspace = await newWorkspace(svc, attacker.organizationId);
    const cases: Array<[TestService['key'], string, Graph]> = [
      [svc.key, svc.workspaceId, actionGraph(String(elsewhere.activeIntegrationId))],
      [svc.key, svc.workspaceId, actionGraph(crypto.randomUUID())],
      [svc.key, svc.workspaceId, actionGraph(connectionId, second.actionVersionId)],
      [attacker.key, attackerWorkspace, actionGraph(connectionId)],
    ];
    for (const [key, workspaceId, graph] of cases) await expectRefused(save(graph, key, workspaceId), 400, 'nodes.');
  });

  it('refuses in the worker a connection of another workspace or organization that got past the save check', async () => {
    const other = await newWorkspace(svc);
    const workflowId = await storedWorkflow(svc.organizationId, other, svc.userId, actionGraph(connectionId));
    const before = api.received.length;
    const errors = await failedNodeErrors(workflowId);
    expect(errors[0]).toMatchObject({ kind: 'configuration' });
    expect(JSON.stringify(errors)).toContain("does not exist in this case's workspace");
    expect(api.received.length).toBe(before);

    const attacker = await newCaller(svc, ['workflow:full', 'case:full']);
    const attackerWorkspace = await newWorkspace(svc, attacker.organizationId);
    const foreign = await storedWorkflow(
      attacker.organizationId,
      attackerWorkspace,
      attacker.userId,
      actionGraph(connectionId),
    );
    const client = clientFor(svc, attacker.key);
    const { caseId } = await answered(client.POST('/api/v1/case', { body: { workflowId: foreign } }), 201);
    const byCase = { params: { path: { caseId } } };
    await answered(
      client.POST('/api/v1/case/{caseId}/execute', {
        ...byCase,
        body: { inputs: { text: 'x', url: `${api.url}/hello` } },
      }),
      202,
    );
    for (;;) {
      const s = await answered(client.GET('/api/v1/case/{caseId}/status', byCase), 200);
      if (s.status === 'FAILED') break;
      expect(s.status).not.toBe('COMPLETED');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(api.received.length).toBe(before);
  });

  it('runs only the action enabled on the connection: another action of its integration is refused at save and in the worker; a new version of the enabled one is not', async () => {
    const added = await answered(
      svc.client.POST('/api/v1/integration/v/{integrationVersionId}/action', {
        params: { path: { integrationVersionId: integration.versionId } },
        body: {
          action: {
            name: 'Delete everything',
            endpoint: `${api.url}/delete`,
            inputs: { text: field('text'), url: field('url') },
            outputs: { echo: field('echo'), leak: field('leak') },
            code,
          },
        },
      }),
      201,
    );
    const other = actionGraph(connectionId, added.versionId);
    const refusal = JSON.stringify(await refused(save(other), 400));
    expect(refusal).toContain('nodes.');
    expect(refusal).toContain('not the action enabled on connection');

    const before = api.received.length;
    const workflowId = await storedWorkflow(svc.organizationId, svc.workspaceId, svc.userId, other);
    const errors = await failedNodeErrors(workflowId);
    expect(errors[0]).toMatchObject({ kind: 'configuration' });
    expect(JSON.stringify(errors)).toContain('not the action enabled on connection');
    expect(api.received.length).toBe(before);

    const enabled = await answered(
      svc.client.GET('/api/v1/integration/action/v/{actionVersionId}', {
        params: { path: { actionVersionId: integration.actionVersionId } },
      }),
      200,
    );
    const updated = await answered(
      svc.client.PATCH('/api/v1/integration/action/{actionId}', {
        params: { path: { actionId: enabled.id } },
        body: { action: { description: 'second version' } },
      }),
      200,
    );
    await answered(save(actionGraph(connectionId, updated.versionId)), 201);
  });

  it('a revoked connection stops running and no longer saves', async () => {
    const res = await answered(
      connect(svc, connection(integration, svc.workspaceId, { credentialData: { api_key: secret } })),
      201,
    );
    const id = String(res.activeIntegrationId);
    const wf = await createWorkflow(svc, actionGraph(id), 'to revoke');
    await answered(
      svc.client.POST('/api/v1/connection/{connectionId}/revoke', { params: { path: { connectionId: id } } }),
      200,
    );
    const caseId = await startCase(svc, wf.workflowId, { text: 'x', url: `${api.url}/hello` });
    expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
    expect(JSON.stringify(await audit(svc, caseId))).toContain('is revoked');
    await expectRefused(save(actionGraph(id)), 400, 'revoked');
  });
});
