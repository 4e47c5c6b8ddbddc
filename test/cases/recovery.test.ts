import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CaseRepo } from '../../src/store/case-repo.js';
import { caseWorkflowId } from '../../src/temporal/contracts/case-run.js';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, execute, initiate, results, waitForEnd } from './support.js';
import { Graph, py } from '../support/graphs.js';

/** A PENDING case of input n → Python n × factor → output m. */
async function multiplierCase(svc: TestService, factor: number): Promise<string> {
  const g = new Graph();
  const input = g.input([{ name: 'n', type: 'float' }]);
  const code = g.python(
    'Multiply',
    py(`return {"m": inputs["n"] * ${factor}}`),
    [{ name: 'n', type: 'float' }],
    [{ name: 'm', type: 'float' }],
  );
  const output = g.output([{ name: 'm', type: 'float' }]);
  g.edge(input, code);
  g.edge(code, output);
  const wf = await createWorkflow(svc, g);
  return initiate(svc, { workflowId: wf.workflowId });
}

describe('a case accepted but never started (the API process died in between)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ config: { cases: { resumeUnstartedAfterMs: 300 } } });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('is started by the recovery loop and completes once', async () => {
    const caseId = await multiplierCase(svc, 2);

    // What execute writes before it starts the run; the process "dies" before the start.
    const repo = new CaseRepo(svc.service.context.store.db);
    expect(
      await repo.markRunning(caseId, {
        inputs: { n: 21 },
        deadlineMs: 60_000,
        temporalWorkflowId: caseWorkflowId(caseId),
      }),
    ).toBe(true);
    expect((await repo.find(caseId))?.temporalRunId).toBeNull();

    const status = await waitForEnd(svc, caseId, 20_000);
    expect(status.status).toBe('COMPLETED');
    expect((await results(svc, caseId)).m?.value).toBe(42);
    expect((await repo.find(caseId))?.temporalRunId).toBeTruthy();
    // Another pass finds nothing left to resume: the run is linked, not started twice.
    expect(await repo.listUnstarted(new Date().toISOString())).toEqual([]);
  });

  it('started while the store went away: execute answers 202 (never a refusal of a case that runs), the run is linked later', async () => {
    const caseId = await multiplierCase(svc, 3);
    // The run is started; the write of its run id meets the store gone (as Postgres stopping would).
    const storeGone = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const setRunId = vi.spyOn(CaseRepo.prototype, 'setRunId').mockRejectedValueOnce(storeGone);
    try {
      const res = await execute(svc, caseId, { inputs: { n: 5 } });
      expect(res.status, res.text).toBe(202);
      expect(res.body.status).toBe('RUNNING');
    } finally {
      setRunId.mockRestore();
    }
    expect((await waitForEnd(svc, caseId, 20_000)).status).toBe('COMPLETED');
    expect((await results(svc, caseId)).m?.value).toBe(15);
    const repo = new CaseRepo(svc.service.context.store.db);
    for (let i = 0; i < 100 && !(await repo.find(caseId))?.temporalRunId; i++)
      await new Promise((r) => setTimeout(r, 100));
    const run = await svc.service.context.temporal.client.workflow.getHandle(caseWorkflowId(caseId)).describe();
    expect((await repo.find(caseId))?.temporalRunId).toBe(run.runId);
  });
});
