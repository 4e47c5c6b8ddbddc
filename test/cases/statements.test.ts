import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseWorkflowId } from '../../src/temporal/contracts/case-run.js';
import { startTestService, type TestService } from '../support/harness.js';
import { recordStatements, type StatementLog } from '../support/statements.js';
import { Receiver } from '../callbacks/receiver.js';
import { createWorkflow, execute, initiate } from './support.js';
import { floatChain, py } from '../support/graphs.js';
import { createHook, deliver, sign } from '../hooks/support.js';

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
 * case, the concurrency caps in force (one statement, src/cases/admission), RUNNING, the run's id
 * (returning the case). The end: the final write in a transaction (4), whether its organization
 * has queued cases to admit, then the callback's delivery, signing secret and first attempt (6,
 * src/callbacks).
 */
const initiateStatements = 3;
const caseStatements = 18;

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

/**
 * A sync hook delivery besides its reads of the case (18): the hook, its rate-limit window, its delivery id
 * claimed (an expired claim cleared, the claim, read back), the hook creator's key, the workflow with its
 * active version's id, the case; execute's 4; the end's 4 and its queued check; the delivery id's answer.
 * The case is read as its run starts and by the waiting delivery: once the run has started, when this
 * process tells it of the end, and at its polls, whose number depends on how long the case takes. The
 * version the delivery resolved is the one the case runs: not read again, its graph not parsed again.
 */
const deliveryStatements = 18;
const caseRead = 'select * from "cases" where "id" = ?';

describe('store statements per sync hook delivery', () => {
  it('stay within the counted number, and the version is read once, from the cache', async () => {
    const created = await createHook(svc, workflowId, {
      name: 'statements',
      scheme: 'standard-webhooks',
      mode: 'sync',
    });
    const delivery = async () => {
      const body = JSON.stringify({ a: 1 });
      statements.take();
      const r = await deliver(svc, created.hookId, body, sign.standardWebhooks(created.secret, body));
      expect(r.status, r.text).toBe(200);
      expect(r.body).toMatchObject({ status: 'COMPLETED', results: { b: { value: 2 } } });
      return statements.take();
    };
    await delivery();
    const all = await delivery();
    const others = all.filter((sql) => sql !== caseRead);
    expect(others.length, others.join('\n')).toBeLessThanOrEqual(deliveryStatements);
    expect(all.length - others.length).toBeGreaterThanOrEqual(2);
    expect(all.filter((sql) => sql.includes('"graph"') || sql.includes('select * from "workflow_versions"'))).toEqual(
      [],
    );
    expect(all.filter((sql) => sql.startsWith('insert into "cases"'))).toHaveLength(1);
  });
});
