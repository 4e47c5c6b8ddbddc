import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { Graph, py } from '../support/graphs.js';
import { newCaller } from '../support/keys.js';

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

async function create(who: { key: string; workspaceId: string }, g: Graph) {
  return svc.request('POST', '/api/v1/workflow', {
    key: who.key,
    headers: { 'x-workspace-id': who.workspaceId },
    body: { name: 'inline', nodes: g.nodes, edges: g.edges },
  });
}

describe('inline process.source passes the catalog code gates at save', () => {
  it('refuses a key without Code: Full (403), also on update', async () => {
    const who = await newCaller(svc, ['workflow:full']);
    const res = await create(who, inlineGraph(clean));
    expect(res.status, res.text).toBe(403);
    expect(res.text).toContain('Code: Full');
    // Without inline source the same key saves a workflow, and cannot add inline source by update.
    const plain = new Graph();
    plain.edge(plain.input([{ name: 'text' }]), plain.output([{ name: 'text' }]));
    const ok = await create(who, plain);
    expect(ok.status, ok.text).toBe(201);
    const g = inlineGraph(clean);
    const upd = await svc.request('PATCH', `/api/v1/workflow/${String(ok.body.workflowId)}`, {
      key: who.key,
      body: { nodes: g.nodes, edges: g.edges },
    });
    expect(upd.status, upd.text).toBe(403);
  });

  it('refuses an unverified organization (403)', async () => {
    const who = await newCaller(svc, ['workflow:full', 'code:full'], { verified: false });
    const res = await create(who, inlineGraph(clean));
    expect(res.status, res.text).toBe(403);
    expect(res.text).toContain('verified');
  });

  it('refuses source failing the security scan with 400 and metadata.violations, and saves clean source', async () => {
    const who = await newCaller(svc, ['workflow:full', 'code:full']);
    const bad = await create(who, inlineGraph(hostile));
    expect(bad.status, bad.text).toBe(400);
    const violations = (bad.body.metadata as { violations?: Array<{ line: number; message: string }> }).violations;
    expect(violations?.[0]).toMatchObject({ line: 1, message: expect.stringContaining("'os'") });
    const good = await create(who, inlineGraph(clean));
    expect(good.status, good.text).toBe(201);
  });
});
