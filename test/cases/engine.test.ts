import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';
import { audit, createWorkflow, results, startCase, waitForEnd } from './support.js';
import { Graph, floatChain, py } from '../support/graphs.js';

describe.each(['sqlite', 'postgres'] as const)('case engine on %s', (dialect) => {
  let svc: TestService;
  let schema: PostgresSchema | undefined;
  beforeAll(async () => {
    if (dialect === 'postgres') schema = await createPostgresSchema();
    svc = await startTestService(schema ? { databaseUrl: schema.url } : {});
    expect(svc.service.context.store.dialect).toBe(dialect);
  });
  afterAll(async () => {
    await svc?.stop();
    await schema?.drop();
  });

  it('runs input → python → output and records results and audit', async () => {
    const g = new Graph();
    const input = g.input([
      { name: 'a', type: 'float' },
      { name: 'b', type: 'float' },
    ]);
    const code = g.python(
      'Add',
      py('print("adding")\nreturn {"sum": inputs["a"] + inputs["b"]}'),
      [
        { name: 'a', type: 'float' },
        { name: 'b', type: 'float' },
      ],
      [{ name: 'sum', type: 'float' }],
    );
    const output = g.output([{ name: 'sum', type: 'float' }]);
    g.edge(input, code);
    g.edge(code, output);
    const wf = await createWorkflow(svc, g);
    const caseId = await startCase(svc, wf.workflowId, { a: 2, b: 3.5 });
    const status = await waitForEnd(svc, caseId);
    expect(status.status).toBe('COMPLETED');
    expect(status.startedAt).toBeTruthy();
    expect(status.finishedAt).toBeTruthy();
    expect(await results(svc, caseId)).toEqual({ sum: { value: 5.5, type: 'float', displayName: 'sum' } });
    const a = await audit(svc, caseId);
    expect(a.executed_nodes).toEqual([input, code, output]);
    expect(a.nb_executed_nodes).toBe(3);
    expect(a.nb_nodes).toBe(3);
    expect(a.failed_nodes).toEqual([]);
    expect(a.remaining_nodes_to_execute).toEqual([]);
    expect(a.running_node).toBe('');
    const node = a.audit.nodes_execution_data[code];
    expect(node).toMatchObject({
      status: 'completed',
      inputs: { a: 2, b: 3.5 },
      outputs: { sum: 5.5 },
      attempts: 1,
      error: null,
    });
    expect(node?.logs.some((l) => l.message.includes('adding'))).toBe(true);
  });

  it('audit times respect causality and name their clock', async () => {
    const { graph, input, code, output } = floatChain('Double', py('return {"b": inputs["a"] * 2}'));
    const wf = await createWorkflow(svc, graph);
    const caseId = await startCase(svc, wf.workflowId, { a: 2 });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const nodes = (await audit(svc, caseId)).audit.nodes_execution_data;
    const [i, c, o] = [nodes[input]!, nodes[code]!, nodes[output]!];
    expect([i.clock, c.clock]).toEqual(['workflow', 'activity']);
    // The workflow clock stood still while the local activity ran: the output node takes Double's end.
    expect(['workflow', 'upstream']).toContain(o.clock);
    const ms = (t: string | null) => Date.parse(t ?? '');
    expect(ms(c.started_at)).toBeGreaterThanOrEqual(ms(i.finished_at));
    expect(ms(o.started_at)).toBeGreaterThanOrEqual(ms(c.finished_at));
    expect(ms(o.finished_at)).toBeGreaterThanOrEqual(ms(o.started_at));
  });

  it('takes either side of a condition route and skips the other', async () => {
    const g = new Graph();
    const routeId = randomUUID();
    const input = g.input([{ name: 'amount', type: 'float' }]);
    const cond = g.condition('Big?', [{ name: 'amount', type: 'float' }], routeId, {
      all: [{ left: { var: 'amount' }, op: 'gt', right: { value: 100 } }],
    });
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
    const a = await audit(svc, smallCase);
    expect(a.audit.nodes_execution_data[big]?.status).toBe('skipped');
    expect(a.audit.nodes_execution_data[small]?.status).toBe('completed');
    expect(a.audit.nodes_execution_data[cond]?.outputs).toEqual({ matches: false });
    const b = await audit(svc, bigCase);
    expect(b.audit.nodes_execution_data[small]?.status).toBe('skipped');
    expect(b.audit.nodes_execution_data[cond]?.outputs).toEqual({ matches: true });
    expect(b.executed_nodes).toEqual([input, cond, big, output]);
    expect(a.executed_nodes).toEqual([input, cond, small, output]);
  });

  it('runs independent branches in parallel and joins them', async () => {
    const g = new Graph();
    const input = g.input([{ name: 'x', type: 'float' }]);
    const sleepy = (name: string, out: string) =>
      g.python(
        name,
        `import time\ndef main(inputs):\n    time.sleep(1)\n    return {"${out}": inputs["x"] * 2}\n`,
        [{ name: 'x', type: 'float' }],
        [{ name: out, type: 'float' }],
      );
    const left = sleepy('Left', 'l');
    const right = sleepy('Right', 'r');
    const join = g.python(
      'Join',
      py('return {"total": inputs["l"] + inputs["r"]}'),
      [
        { name: 'l', type: 'float' },
        { name: 'r', type: 'float' },
      ],
      [{ name: 'total', type: 'float' }],
    );
    const output = g.output([{ name: 'total', type: 'float' }]);
    g.edge(input, left);
    g.edge(input, right);
    g.edge(left, join);
    g.edge(right, join);
    g.edge(join, output);
    const wf = await createWorkflow(svc, g);
    const caseId = await startCase(svc, wf.workflowId, { x: 4 });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect((await results(svc, caseId)).total?.value).toBe(16);
    const data = (await audit(svc, caseId)).audit.nodes_execution_data;
    const l = data[left];
    const r = data[right];
    // Both slept one second; run in parallel, each started before the other finished.
    expect(Date.parse(l?.started_at ?? '')).toBeLessThan(Date.parse(r?.finished_at ?? ''));
    expect(Date.parse(r?.started_at ?? '')).toBeLessThan(Date.parse(l?.finished_at ?? ''));
    expect(Date.parse(data[join]?.started_at ?? '')).toBeGreaterThanOrEqual(
      Math.max(Date.parse(l?.finished_at ?? ''), Date.parse(r?.finished_at ?? '')),
    );
  });

  it('ends FAILED with the node error in the audit when a node fails', async () => {
    const g = new Graph();
    const input = g.input([{ name: 'x', type: 'float' }]);
    const boom = g.python('Boom', py('raise ValueError("no good")'), [], [{ name: 'y' }], {
      execution: { max_attempts: 2, timeout_ms: 5000 },
    });
    const after = g.python('After', py('return {"y": "never"}'), [], [{ name: 'y' }]);
    const output = g.output([{ name: 'y' }]);
    g.edge(input, boom);
    g.edge(boom, after);
    g.edge(after, output);
    const wf = await createWorkflow(svc, g);
    const caseId = await startCase(svc, wf.workflowId, { x: 1 });
    const status = await waitForEnd(svc, caseId);
    expect(status.status).toBe('FAILED');
    expect(status.error).toMatchObject({ nodeId: boom });
    expect((status.error as { message: string }).message).toContain('no good');
    const a = await audit(svc, caseId);
    expect(a.failed_nodes).toEqual([boom]);
    expect(a.nb_failed_nodes).toBe(1);
    expect(a.audit.nodes_execution_data[boom]).toMatchObject({ status: 'failed', attempts: 2 });
    expect(a.audit.nodes_execution_data[boom]?.error?.message).toContain('no good');
    expect(a.audit.nodes_execution_data[after]?.status).toBe('not_executed');
    const r = await answered(svc.client.GET('/api/v1/case/{caseId}/results', { params: { path: { caseId } } }), 200);
    expect(r).toMatchObject({ status: 'FAILED' });
  });
});
