import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseWorkflowId } from '../../src/temporal/contracts/case-run.js';
import { startTestService, type TestService } from '../support/harness.js';
import { recordStatements, type StatementLog } from '../support/statements.js';
import { Receiver } from '../callbacks/receiver.js';
import { createWorkflow, execute, initiate } from './support.js';
import { floatChain, py } from '../support/graphs.js';

let svc: TestService;
let hook: Receiver;
let statements: StatementLog;
let workflowId: string;

beforeAll(async () => {
  svc = await startTestService({
    // Every request looks its key up (one statement each), and no background pass runs during a case.
    config: {
      keyCacheMs: 0,
      cases: { resumeUnstartedAfterMs: 3_600_000, reconcileIntervalMs: 3_600_000, admissionIntervalMs: 3_600_000 },
    },
  });
  hook = new Receiver();
  await hook.listen();
  workflowId = (await createWorkflow(svc, floatChain('Add', py('return {"b": inputs["a"] + 1}')).graph)).workflowId;
  statements = await recordStatements(svc.service.context.store.db);
});
afterAll(async () => {
  await hook?.close();
  await svc?.stop();
});

/** One case input → Python → output with a callback; the statements of its initiate and of the rest. */
async function runCase(): Promise<{ initiate: string[]; rest: string[] }> {
  statements.take();
  const caseId = await initiate(svc, { workflowId });
  const initiated = statements.take();
  const r = await execute(svc, caseId, { inputs: { a: 1 }, callbackUrl: hook.url });
  expect(r.status, r.text).toBe(202);
  const run = await svc.service.context.temporal.client.workflow.getHandle(caseWorkflowId(caseId)).result();
  expect(run).toMatchObject({ status: 'COMPLETED' });
  return { initiate: initiated, rest: statements.take() };
}

/**
 * Initiate: the key, the workflow with its active version's id, the case. Execute: the key, the
 * case, the concurrency caps in force (one statement, src/cases/admission), whether other
 * organizations are active (the fair share, one statement), RUNNING, the run's id (returning the case). The end: the final write in a transaction (4), whether its organization
 * has queued cases to admit, then the callback's delivery, signing secret and first attempt (6,
 * src/callbacks).
 */
const initiateStatements = 3;
const caseStatements = 19;

describe('store statements per case', () => {
  it('stay within the counted number, and the graph is not read again once this process has it', async () => {
    await runCase();
    const { initiate: initiated, rest } = await runCase();
    const all = [...initiated, ...rest];
    expect(initiated.length, initiated.join('\n')).toBeLessThanOrEqual(initiateStatements);
    expect(all.length, all.join('\n')).toBeLessThanOrEqual(caseStatements);
    expect(all.filter((sql) => sql.includes('"graph"') || sql.includes('select * from "workflow_versions"'))).toEqual(
      [],
    );
    // The counting sees the case's own writes (a wrapper that saw nothing would pass the bounds).
    expect(initiated.filter((sql) => sql.startsWith('insert into "cases"'))).toHaveLength(1);
    expect(rest.filter((sql) => sql.startsWith('insert into "case_nodes"'))).toHaveLength(1);
  });
});
