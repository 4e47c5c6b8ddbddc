import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { planOf, recordStatements, type StatementLog } from '../support/statements.js';
import { createRepositories } from '../../src/store/repositories.js';

let svc: TestService;
let statements: StatementLog;

beforeAll(async () => {
  // The passes are called by the test, not by their timers.
  svc = await startTestService({
    config: {
      cases: { resumeUnstartedAfterMs: 3_600_000, reconcileIntervalMs: 3_600_000, admissionIntervalMs: 3_600_000 },
    },
  });
  statements = await recordStatements(svc.service.context.store.db);
});
afterAll(async () => {
  await svc?.stop();
});

describe('the background passes over every organization', () => {
  it('find RUNNING and QUEUED cases through an index on status, not by reading every case ever run', async () => {
    const { services } = svc.service.context;
    statements.take();
    await services.cases.resumeUnstarted(0);
    await services.cases.dispatchQueued();
    await services.caseReconciler.reconcile();
    const metrics = await svc.request('GET', '/metrics', { key: null });
    expect(metrics.status).toBe(200);
    const reads = statements.take().filter((sql) => /^select\b/i.test(sql) && sql.includes('from "cases"'));
    expect(reads.length).toBeGreaterThanOrEqual(4);
    for (const sql of reads) {
      const plan = await planOf(svc.service.context.store.db, sql);
      // A scan of the table or of an index not led by status grows with the table: every case ever run.
      expect(
        plan.filter((line) => /^SCAN cases\b/.test(line)),
        `${sql}\n${plan.join('\n')}`,
      ).toEqual([]);
      expect(
        plan.filter((line) => /^SEARCH cases\b/.test(line) && !/\((\w+=\? AND )*status=\?/.test(line)),
        `${sql}\n${plan.join('\n')}`,
      ).toEqual([]);
    }
  });

  it('find overdue deliveries through an index on status and due time, in its order, not by reading every delivery', async () => {
    const { services, store } = svc.service.context;
    statements.take();
    await services.deliverySweep.sweep();
    // A later page of the same walk (the sweep goes on from where its last pass stopped).
    await createRepositories(store.db).callbacks.overdueDeliveries(new Date().toISOString(), { dueAt: '', id: '' }, 10);
    const reads = statements
      .take()
      .filter((sql) => /^select\b/i.test(sql) && sql.includes('from "callback_deliveries"'));
    expect(reads).toHaveLength(2);
    for (const sql of reads) {
      const plan = await planOf(store.db, sql);
      const shown = `${sql}\n${plan.join('\n')}`;
      expect(
        plan.filter((line) => /^SCAN callback_deliveries\b/.test(line)),
        shown,
      ).toEqual([]);
      expect(
        plan.filter(
          (line) =>
            /^SEARCH callback_deliveries\b/.test(line) &&
            !/USING INDEX callback_deliveries_status_due \(status=\? AND /.test(line),
        ),
        shown,
      ).toEqual([]);
      // Sorting would read every overdue delivery to return the first few.
      expect(
        plan.filter((line) => /TEMP B-TREE/.test(line)),
        shown,
      ).toEqual([]);
    }
  });
});
