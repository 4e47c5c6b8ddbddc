import { describe, expect, it } from 'vitest';
import { apiServiceWithWorkerProcesses } from '../support/worker-process.js';
import { audit, caseStatus, createWorkflow, results, startCase, waitForEnd } from './support.js';
import { Graph } from '../support/graphs.js';

/**
 * A worker in its own process (the built CLI), sharing the SQLite file and
 * the task queue with an API-only service in this process. Killing it with
 * SIGKILL mid-case must not lose or duplicate anything once another starts.
 */
const { service, workers } = apiServiceWithWorkerProcesses();

describe('worker killed mid-case', () => {
  it('completes the case once on another worker, with each node recorded once', async () => {
    const svc = service();
    const g = new Graph();
    const input = g.input([{ name: 'text' }]);
    const code = g.python(
      'Slow',
      `import time\ndef main(inputs):\n    time.sleep(${Number(process.env.KILL_TEST_SLEEP_S ?? 4)})\n    return {"text": inputs["text"].upper()}\n`,
      [{ name: 'text' }],
      [{ name: 'text' }],
    );
    const output = g.output([{ name: 'text' }]);
    g.edge(input, code);
    g.edge(code, output);
    const wf = await createWorkflow(svc, g);

    const first = workers.start();
    // A quick case proves the child worker is polling before the real one starts.
    const quick = new Graph();
    const qi = quick.input([{ name: 'text' }]);
    const qo = quick.output([{ name: 'text' }]);
    quick.edge(qi, qo);
    const quickWf = await createWorkflow(svc, quick);
    const warm = await startCase(svc, quickWf.workflowId, { text: 'warm' });
    expect((await waitForEnd(svc, warm, 90_000)).status).toBe('COMPLETED');

    const caseId = await startCase(svc, wf.workflowId, { text: 'survive' });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await caseStatus(svc, caseId)).status).toBe('RUNNING');
    await workers.crashAndReplace(first);
    // The dead worker's task is handed on once its timeout (temporal.caseWorkflowTaskTimeoutMs, 60 s) has passed.
    const end = await waitForEnd(svc, caseId, 150_000);
    expect(end.status).toBe('COMPLETED');
    expect(await results(svc, caseId)).toEqual({ text: { value: 'SURVIVE', type: 'str', displayName: 'text' } });
    const a = await audit(svc, caseId);
    expect(a.executed_nodes).toEqual([input, code, output]);
    expect(Object.keys(a.audit.nodes_execution_data).sort()).toEqual([input, code, output].sort());
    const rows = await svc.service.context.store.db
      .selectFrom('case_nodes')
      .select(['node_id'])
      .where('case_id', '=', caseId)
      .execute();
    expect(rows.map((r) => r.node_id).sort()).toEqual([input, code, output].sort());
    const history = await svc.service.context.temporal.client.workflow.getHandle(`case-${caseId}`).fetchHistory();
    const completions = (history.events ?? []).filter((e) => e.workflowExecutionCompletedEventAttributes);
    expect(completions).toHaveLength(1);
  }, 240_000);
});
