import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, startCase, waitForEnd } from './support.js';
import { Graph, vars } from '../support/graphs.js';
import { caseIdsOf } from '../hooks/support.js';
import { Migrator } from 'kysely';
import { migrations } from '../../src/store/migrations/index.js';
import { migrateToLatest } from '../../src/store/database.js';
import { randomUUID } from 'node:crypto';
import { CaseRepo } from '../../src/store/case-repo.js';

/**
 * Calls fan out: a workflow with n call_workflow nodes to one with n more starts n + n² cases from a single
 * execute, past any rate limit or concurrency cap (sub-workflow cases never wait), up to 500 nodes per graph
 * and cases.maxCallDepth levels. cases.maxCallCases bounds the sub-workflow cases one top-level case starts.
 */
const MAX_CALL_CASES = 5;
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ config: { cases: { maxCallCases: MAX_CALL_CASES } } });
});
afterAll(async () => {
  await svc?.stop();
});

/** input(text) → `calls` call_workflow nodes of `callee` one after another → output(text) */
function caller(callee: string, calls: number): Graph {
  const g = new Graph();
  let previous = g.input([{ name: 'text' }]);
  for (let i = 0; i < calls; i += 1) {
    const call = g.node({
      name: `Call ${i}`,
      type: 'subworkflow',
      handler_class: 'call_workflow',
      process: { workflow_id: callee },
      input_schema: vars([{ name: 'text' }]),
      output_schema: vars([{ name: 'text' }]),
    });
    g.edge(previous, call);
    previous = call;
  }
  g.edge(previous, g.output([{ name: 'text' }]));
  return g;
}

const casesOf = async (workflowId: string) => (await caseIdsOf(svc, workflowId)).length;

describe('sub-workflow cases of one top-level case', () => {
  it('stop at cases.maxCallCases: the call past it fails, and with it the case', { timeout: 120_000 }, async () => {
    const leaf = new Graph();
    leaf.edge(leaf.input([{ name: 'text' }]), leaf.output([{ name: 'text' }]));
    const b = (await createWorkflow(svc, leaf, 'leaf')).workflowId;
    const a = (await createWorkflow(svc, caller(b, 3), 'three leaves')).workflowId;
    const c = (await createWorkflow(svc, caller(a, 3), 'three of three')).workflowId;

    // Within the bound: three sub-workflow cases.
    expect((await waitForEnd(svc, await startCase(svc, a, { text: 'x' }))).status).toBe('COMPLETED');
    expect(await casesOf(b)).toBe(3);

    // 3 + 9 sub-workflow cases: the sixth is refused.
    const top = await startCase(svc, c, { text: 'x' });
    const ended = await waitForEnd(svc, top, 90_000);
    expect(ended.status).toBe('FAILED');
    expect(JSON.stringify(ended.error)).toContain('cases.maxCallCases');
    // The first A case above, plus what this tree started: exactly the bound.
    expect((await casesOf(a)) - 1 + ((await casesOf(b)) - 3)).toBe(MAX_CALL_CASES);
    const { db } = svc.service.context.store;
    const tree = await db.selectFrom('cases').select('id').where('root_case_id', '=', top).execute();
    expect(tree).toHaveLength(MAX_CALL_CASES);

    // Sub-workflow cases written before the column: the migration finds their top-level case, two levels up.
    const roots = () =>
      db
        .selectFrom('cases')
        .select(['id', 'root_case_id'])
        .where('parent_case_id', 'is not', null)
        .orderBy('id')
        .execute();
    const before = await roots();
    const migrator = new Migrator({ db, provider: { getMigrations: () => Promise.resolve(migrations) } });
    // Down to the migration before it (later ones, if any, are undone first).
    expect((await migrator.migrateTo('112_cases_status_index')).results).toContainEqual({
      migrationName: '118_case_call_trees',
      direction: 'Down',
      status: 'Success',
    });
    // Back up to the latest, so the service (and the next test) runs on the whole schema again.
    await migrateToLatest(db);
    expect(await roots()).toEqual(before);
  });

  it('count a sub-workflow case written without its root (a process from before the column) in its whole tree', async () => {
    const leaf = new Graph();
    leaf.edge(leaf.input([{ name: 'text' }]), leaf.output([{ name: 'text' }]));
    const workflowId = (await createWorkflow(svc, leaf, 'a tree written across an upgrade')).workflowId;
    const top = await startCase(svc, workflowId, { text: 'x' });
    await waitForEnd(svc, top);
    const { db } = svc.service.context.store;
    const repo = new CaseRepo(db);
    const record = await repo.find(top);
    if (!record) throw new Error('the top-level case is not in the store');
    const under = (caseId: string, id = randomUUID()) => {
      const start = { inputs: {}, deadlineMs: 60_000, temporalWorkflowId: `child-${id}` };
      return {
        id,
        write: (max: number) =>
          repo.createChild(
            id,
            {
              id,
              organizationId: record.organizationId,
              workspaceId: record.workspaceId,
              workflowId: record.workflowId,
              entityId: record.entityId,
              workflowVersionId: record.workflowVersionId,
              workflowVersionNumber: record.workflowVersionNumber,
              source: record.source,
              initialInput: record.initialInput,
              createdByKeyId: record.createdByKeyId,
              createdByUserId: record.createdByUserId,
            },
            { caseId, nodeId: 'call' },
            start,
            max,
          ),
      };
    };
    const first = under(top);
    const second = under(top);
    expect(await first.write(2)).toBe('created');
    expect(await second.write(2)).toBe('created');
    // As a process from before root_case_id wrote it: no root.
    await db.updateTable('cases').set({ root_case_id: null }).where('id', '=', second.id).execute();

    const below = under(second.id);
    expect(await below.write(3)).toBe('created');
    const row = await db
      .selectFrom('cases')
      .select('root_case_id')
      .where('id', '=', below.id)
      .executeTakeFirstOrThrow();
    expect(row.root_case_id).toBe(top);
    // The tree's bound counts the top-level case's rooted cases (first, below): a third is refused.
    expect(await under(below.id).write(2)).toBe('full');
  });
});
