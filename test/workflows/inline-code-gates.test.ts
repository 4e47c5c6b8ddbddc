import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { Graph, py } from '../support/graphs.js';
import { newCaller } from '../support/keys.js';
import { violations } from './support.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

function inlineGraph(source: string): Graph {
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const code = g.python('Inline', source, [{ name: 'text' }], [{ name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  g.edge(input, code);
  g.edge(code, output);
  return g;
}

const clean = py('return {"text": inputs["text"]}');
const hostile = 'import os\ndef main(inputs):\n    return {"text": os.environ.get("HOME", "")}\n';

const as = (who: { key: string }) => createClient({ baseUrl: svc.url, key: who.key });

async function create(who: { key: string; workspaceId: string }, g: Graph) {
  return as(who).POST('/api/v1/workflow', {
    params: { header: { 'x-workspace-id': who.workspaceId } },
    body: { name: 'inline', nodes: g.nodes, edges: g.edges },
  });
}

describe('inline process.source passes the catalog code gates at save', () => {
  it('refuses a key without Code: Full (403), also on update', async () => {
    const who = await newCaller(svc, ['workflow:full']);
    const res = await create(who, inlineGraph(clean));
    expect(res.response.status).toBe(403);
    expect(res.error?.message).toContain('Code: Full');
    // Without inline source the same key saves a workflow, and cannot add inline source by update.
    const plain = new Graph();
    plain.edge(plain.input([{ name: 'text' }]), plain.output([{ name: 'text' }]));
    const ok = await answered(create(who, plain), 201);
    const g = inlineGraph(clean);
    const upd = await as(who).PATCH('/api/v1/workflow/{workflowId}', {
      params: { path: { workflowId: ok.workflowId } },
      body: { nodes: g.nodes, edges: g.edges },
    });
    expect(upd.response.status, JSON.stringify(upd.error)).toBe(403);
  });

  it('refuses an unverified organization (403)', async () => {
    const who = await newCaller(svc, ['workflow:full', 'code:full'], { verified: false });
    const res = await create(who, inlineGraph(clean));
    expect(res.response.status).toBe(403);
    expect(res.error?.message).toContain('verified');
  });

  it('refuses source failing the security scan with 400 and metadata.violations, and saves clean source', async () => {
    const who = await newCaller(svc, ['workflow:full', 'code:full']);
    const bad = await create(who, inlineGraph(hostile));
    expect(bad.response.status, JSON.stringify(bad.error)).toBe(400);
    expect(violations(bad.error)[0]).toMatchObject({ line: 1, message: expect.stringContaining("'os'") });
    await answered(create(who, inlineGraph(clean)), 201);
  });
});
