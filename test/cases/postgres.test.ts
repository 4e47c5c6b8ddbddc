import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { Graph, audit, createWorkflow, py, results, startCase, waitForEnd } from './support.js';

let svc: TestService;
let schema: PostgresSchema;
beforeAll(async () => {
  schema = await createPostgresSchema();
  svc = await startTestService({ databaseUrl: schema.url });
});
afterAll(async () => {
  await svc?.stop();
  await schema?.drop();
});

describe('cases on Postgres', () => {
  it('runs on the Postgres store', () => {
    expect(svc.service.context.store.dialect).toBe('postgres');
  });

  it('runs a linear case end to end', async () => {
    const g = new Graph();
    const input = g.input([{ name: 'a', type: 'float' }, { name: 'b', type: 'float' }]);
    const code = g.python('Add', py('return {"sum": inputs["a"] + inputs["b"]}'), [{ name: 'a', type: 'float' }, { name: 'b', type: 'float' }], [{ name: 'sum', type: 'float' }]);
    const output = g.output([{ name: 'sum', type: 'float' }]);
    g.edge(input, code);
    g.edge(code, output);
    const wf = await createWorkflow(svc, g);
    const caseId = await startCase(svc, wf.workflowId, { a: 1.5, b: 2 });
    const status = await waitForEnd(svc, caseId);
    expect(status.status).toBe('COMPLETED');
    expect(status.startedAt).toBeTruthy();
    expect(await results(svc, caseId)).toEqual({ sum: { value: 3.5, type: 'float', displayName: 'sum' } });
    const a = await audit(svc, caseId);
    expect(a.executed_nodes).toEqual([input, code, output]);
    expect(a.audit.nodes_execution_data[code]).toMatchObject({ status: 'completed', inputs: { a: 1.5, b: 2 }, outputs: { sum: 3.5 }, attempts: 1 });
  });

  it('runs a branching case end to end, recording the skipped branch', async () => {
    const g = new Graph();
    const routeId = randomUUID();
    const input = g.input([{ name: 'amount', type: 'float' }]);
    const cond = g.condition('Big?', [{ name: 'amount', type: 'float' }], routeId, { all: [{ left: { var: 'amount' }, op: 'gt', right: { value: 100 } }] });
    const big = g.python('Big', py('return {"label": "big"}'), [], [{ name: 'label' }]);
    const small = g.python('Small', py('return {"label": "small"}'), [], [{ name: 'label' }]);
    const output = g.output([{ name: 'label' }]);
    g.edge(input, cond);
    g.edge(cond, big, { route_id: routeId });
    g.edge(cond, small, { route_id: routeId, route_complement: true });
    g.edge(big, output);
    g.edge(small, output);
    const wf = await createWorkflow(svc, g);
    const bigCase = await startCase(svc, wf.workflowId, { amount: 500 });
    const smallCase = await startCase(svc, wf.workflowId, { amount: 5 });
    expect((await waitForEnd(svc, bigCase)).status).toBe('COMPLETED');
    expect((await waitForEnd(svc, smallCase)).status).toBe('COMPLETED');
    expect((await results(svc, bigCase)).label?.value).toBe('big');
    expect((await results(svc, smallCase)).label?.value).toBe('small');
    const a = await audit(svc, bigCase);
    expect(a.audit.nodes_execution_data[small]?.status).toBe('skipped');
    expect(a.audit.nodes_execution_data[cond]?.outputs).toEqual({ matches: true });
    expect(a.executed_nodes).toEqual([input, cond, big, output]);
  });
});
