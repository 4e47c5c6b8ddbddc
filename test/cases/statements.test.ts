import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseWorkflowId } from '../../src/temporal/contracts/case-run.js';
import { startTestService, type TestService } from '../support/harness.js';
import { recordStatements, type StatementLog } from '../support/statements.js';
import { Receiver } from '../callbacks/receiver.js';
import { createWorkflow, execute, initiate } from './support.js';
import { floatChain, py } from '../support/graphs.js';
import { createHook, deliver, sign } from '../hooks/support.js';

const { EventType } = temporal.api.enums.v1;

let svc: TestService;
let hook: Receiver;
let statements: StatementLog;
let workflowId: string;
const sealed = { encrypted: 0, decrypted: 0 };

beforeAll(async () => {
  svc = await startTestService({
    // Every request looks its key up and every end its signing secret and subscribers (one statement each, so
    // the count does not hang on how long a case takes), and no background pass runs during a case: nor does the
    // once-a-second publishing of the process's load, whose reading by admission (a quarter interval) then lasts.
    config: {
      keyCacheMs: 0,
      callbacks: { secretCacheMs: 0 },
      events: { subscriberCacheMs: 0 },
      cases: {
        resumeUnstartedAfterMs: 3_600_000,
        reconcileIntervalMs: 3_600_000,
        admissionIntervalMs: 3_600_000,
        fairShare: { loadIntervalMs: 3_600_000 },
      },
    },
  });
  hook = new Receiver();
  await hook.listen();
  workflowId = (await createWorkflow(svc, floatChain('Add', py('return {"b": inputs["a"] + 1}')).graph)).workflowId;
  statements = await recordStatements(svc.service.context.store.db);
  // The client and the worker of this process share the one codec: every payload sealed or opened passes here.
  const { codec } = svc.service.context.temporal;
  const encrypt = codec.encrypt.bind(codec);
  const decrypt = codec.decrypt.bind(codec);
  codec.encrypt = (payload) => {
    sealed.encrypted += 1;
    return encrypt(payload);
  };
  codec.decrypt = (payload) => {
    sealed.decrypted += 1;
    return decrypt(payload);
  };
});
afterAll(async () => {
  await hook?.close();
  await svc?.stop();
});

/** What one case cost the service, counted from outside its code. */
interface CaseCount {
  initiate: string[];
  rest: string[];
  encrypted: number;
  decrypted: number;
  /** The run's history, by event type. */
  events: temporal.api.enums.v1.EventType[];
  callbacks: number;
}

/**
 * One case input → Python → output with a callback. Its end is read from the raw history (no
 * payload decoded, so the codec counts only the service's own work).
 */
async function runCase(): Promise<CaseCount> {
  statements.take();
  const before = { ...sealed, callbacks: hook.received.length };
  const caseId = await initiate(svc, { workflowId });
  const initiated = statements.take();
  const r = await execute(svc, caseId, { inputs: { a: 1 }, callbackUrl: hook.url });
  expect(r.status, r.text).toBe(202);
  const handle = svc.service.context.temporal.client.workflow.getHandle(caseWorkflowId(caseId));
  let events: temporal.api.enums.v1.EventType[] = [];
  await expect
    .poll(
      async () => {
        events = ((await handle.fetchHistory()).events ?? []).map(
          (e) => e.eventType ?? EventType.EVENT_TYPE_UNSPECIFIED,
        );
        return events.at(-1);
      },
      { timeout: 60_000, interval: 50 },
    )
    .toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
  return {
    initiate: initiated,
    rest: statements.take(),
    encrypted: sealed.encrypted - before.encrypted,
    decrypted: sealed.decrypted - before.decrypted,
    events,
    callbacks: hook.received.length - before.callbacks,
  };
}

/** Write transactions: explicit ones (begin … commit) and writes made outside one (each its own). */
function writeTransactions(sqls: string[]): number {
  let open = false;
  let count = 0;
  for (const sql of sqls) {
    if (sql === 'begin') {
      open = true;
      count += 1;
    } else if (sql === 'commit' || sql === 'rollback') open = false;
    else if (!open && /^(insert|update|delete)\b/.test(sql)) count += 1;
  }
  return count;
}

/**
 * Initiate: the key, the workflow with its active version's id, the case. Execute: the key, the
 * case, RUNNING where no cap applies and nothing of its organization is queued (one statement; while
 * the fair share is engaged, under saturation, the caps and whether other organizations are active
 * are read too: the bound leaves room for those two, src/cases/admission), the run's id (returning the
 * case). The end: the workspace's event subscribers, the final write with the
 * callback's delivery row in one transaction (5, with whether its organization has cases queued),
 * the signing secret, the first attempt's record (4, src/callbacks). docs/performance.md lists them
 * (with the caches on, as by default, the keys, subscribers and secret are mostly not read).
 */
const initiateStatements = 3;
const caseStatements = 20;
const caseWriteTransactions = 5;
/**
 * Payloads sealed per case: the run's input, summary and details (the client), the local activity's
 * input, summary and result (one: the Python node is the last and runs with the end), the run's result;
 * opened: the run's input (the worker), the local activity's input and result.
 */
const caseEncryptions = 7;
const caseDecryptions = 3;

describe('what a case costs the service', () => {
  it('stays within the counted statements, transactions, payload seals and history events', async () => {
    await runCase();
    const count = await runCase();
    const all = [...count.initiate, ...count.rest];
    expect(count.initiate.length, count.initiate.join('\n')).toBeLessThanOrEqual(initiateStatements);
    expect(all.length, all.join('\n')).toBeLessThanOrEqual(caseStatements);
    expect(writeTransactions(all), all.join('\n')).toBeLessThanOrEqual(caseWriteTransactions);
    expect(all.filter((sql) => sql.includes('"graph"') || sql.includes('select * from "workflow_versions"'))).toEqual(
      [],
    );
    // The counting sees the case's own writes (a wrapper that saw nothing would pass the bounds).
    expect(count.initiate.filter((sql) => sql.startsWith('insert into "cases"'))).toHaveLength(1);
    expect(count.rest.filter((sql) => sql.startsWith('insert into "case_nodes"'))).toHaveLength(1);
    expect(count.rest.filter((sql) => sql.startsWith('insert into "callback_deliveries"'))).toHaveLength(1);

    expect(count.callbacks).toBe(1);
    expect({ encrypted: count.encrypted, decrypted: count.decrypted }).toEqual({
      encrypted: caseEncryptions,
      decrypted: caseDecryptions,
    });
    // One workflow task, one local activity (the Python node and the end's write and callback), the status tag.
    const { EVENT_TYPE_WORKFLOW_TASK_COMPLETED, EVENT_TYPE_MARKER_RECORDED } = EventType;
    expect(count.events.filter((t) => t === EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).toHaveLength(1);
    expect(count.events.filter((t) => t === EVENT_TYPE_MARKER_RECORDED)).toHaveLength(1);
    expect(count.events).toHaveLength(7);
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
