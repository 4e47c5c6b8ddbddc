import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { Graph, py } from '../support/graphs.js';
import { startTestService, type TestService } from '../support/harness.js';

/** One fenced `http` block of the doc: `METHOD path → status[|status] [(name = field)]`, then an optional JSON body. */
interface DocRequest {
  method: string;
  path: string;
  statuses: number[];
  keep?: { name: string; field: string };
  body?: string;
}

/** The `http` blocks of the doc's Rerun section, in order. */
function rerunRequests(): DocRequest[] {
  const doc = readFileSync(new URL('../../docs/cases.md', import.meta.url), 'utf8');
  const start = doc.indexOf('\n## Rerun\n');
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end);
  const requests: DocRequest[] = [];
  for (const match of section.matchAll(/```http\n([\s\S]*?)```/g)) {
    const [head = '', ...rest] = (match[1] ?? '').trim().split('\n');
    const parsed = /^(GET|POST) (\S+) → ([\d|]+)(?: \((\w+) = (\w+)\))?$/.exec(head);
    if (!parsed) throw new Error(`not a request line: ${head}`);
    const [, method = '', path = '', statuses = '', name, field] = parsed;
    const body = rest.join('\n').trim();
    requests.push({
      method,
      path,
      statuses: statuses.split('|').map(Number),
      ...(name && field ? { keep: { name, field } } : {}),
      ...(body ? { body } : {}),
    });
  }
  return requests;
}

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe('docs/cases.md: Rerun walk-through', () => {
  it('runs every request of the section in order, answered as documented', async () => {
    const requests = rerunRequests();
    expect(requests.length).toBeGreaterThanOrEqual(7);

    // The doc's workflow: input(n) → Step 1 (+1) → Step 2 (×2) → Step 3 (raises over 10) → Step 4 (+4) → output(n).
    const g = new Graph();
    const n = [{ name: 'n', type: 'int' as const }];
    const ids = [
      g.input(n),
      g.python('Step 1', py('return {"n": inputs["n"] + 1}'), n, n),
      g.python('Step 2', py('return {"n": inputs["n"] * 2}'), n, n),
      g.python(
        'Step 3',
        py('if inputs["n"] > 10:\n    raise ValueError("too big")\nreturn {"n": inputs["n"] + 3}'),
        n,
        n,
      ),
      g.python('Step 4', py('return {"n": inputs["n"] + 4}'), n, n),
      g.output(n),
    ];
    for (let i = 1; i < ids.length; i++) g.edge(ids[i - 1] as string, ids[i] as string);
    const { workflowId } = await createWorkflow(svc, g, 'doc rerun');
    const caseId = await startCase(svc, workflowId, { n: 5 });
    const completedId = await startCase(svc, workflowId, { n: 1 });
    expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
    expect((await waitForEnd(svc, completedId)).status).toBe('COMPLETED');

    const vars: Record<string, string> = { caseId, completedId, workflowId };
    const fill = (text: string) =>
      text.replace(/\{(\w+)\}/g, (_match, name: string) => {
        const value = vars[name];
        if (value === undefined) throw new Error(`the doc names {${name}} before it is known`);
        return value;
      });
    for (const request of requests) {
      const r = await svc.request(request.method, fill(request.path), {
        ...(request.body ? { body: JSON.parse(fill(request.body)) as unknown } : {}),
      });
      expect(request.statuses, `${request.method} ${request.path}: ${r.text}`).toContain(r.status);
      if (request.keep) vars[request.keep.name] = String(r.body[request.keep.field]);
      // What the prose around the blocks says: the rerun reuses Steps 1 and 2, the original lists its reruns.
      if (request.path === '/api/v1/case/{rerunId}/audit') {
        await waitForEnd(svc, vars.rerunId as string);
        const nodes = (await audit(svc, vars.rerunId as string)).audit;
        expect(nodes.nodes_execution_data[ids[1] as string]?.reused).toEqual({ case_id: caseId, node_id: ids[1] });
        expect(nodes.nodes_execution_data[ids[2] as string]?.reused).toEqual({ case_id: caseId, node_id: ids[2] });
      }
      if (request.path === '/api/v1/case/{caseId}/status') expect(r.body.reruns).toEqual([vars.rerunId]);
    }
  });
});
