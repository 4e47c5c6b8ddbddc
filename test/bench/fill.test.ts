import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { fillStores } from '../../scripts/bench-fill.js';
import { freePort } from '../../src/net/free-port.js';
import { devServerEngine, startDevServer, type DevServer } from '../../src/temporal/dev-server.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { headlessDevServer } from '../support/dev-server.js';
import { py, textChain } from '../support/graphs.js';
import { startTestService, type TestService } from '../support/harness.js';

let svc: TestService | undefined;
let server: DevServer | undefined;
let dataDir: string | undefined;
afterAll(async () => {
  await svc?.stop();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

interface Run {
  workflowId: string;
  runId: string;
}

/** The copied runs, oldest first (the order their retention falls due in), and the templates' runs. */
function runsOf(dir: string, templates: ReadonlySet<string>): { copies: Run[]; templates: Run[] } {
  const db = new Database(path.join(dir, 'caseflow.db'), { readonly: true });
  try {
    const rows = db
      .prepare<[], { id: string; workflowId: string; runId: string }>(
        'select id, temporal_workflow_id as workflowId, temporal_run_id as runId from cases order by created_at',
      )
      .all();
    const run = ({ workflowId, runId }: Run) => ({ workflowId, runId });
    return {
      copies: rows.filter((r) => !templates.has(r.id)).map(run),
      templates: rows.filter((r) => templates.has(r.id)).map(run),
    };
  } finally {
    db.close();
  }
}

/** The history nodes the server's file holds for a run's tree. */
function historyNodes(dir: string, runId: string): number {
  const db = new Database(path.join(dir, 'temporal.db'), { readonly: true });
  try {
    const tree = Buffer.from(runId.replaceAll('-', ''), 'hex');
    return Number(db.prepare('select count(*) from history_node where tree_id = ?').pluck().get(tree));
  } finally {
    db.close();
  }
}

async function exists(client: Client, run: Run): Promise<boolean> {
  try {
    await client.workflow.getHandle(run.workflowId, run.runId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

describe('a filled store whose runs carry their retention timers (BENCH_E2E_FILL_DELETING)', () => {
  it('the server deletes each copy, its own history with it, as its timer falls due, and keeps those not due', async () => {
    const ports = { port: await freePort(), uiPort: await freePort() };
    svc = await startTestService({ embeddedTemporal: true, config: { temporal: { devServer: ports } } });
    dataDir = svc.dataDir;
    const namespace = svc.config.temporal.namespace;
    const engine = devServerEngine(svc.config.temporal.devServer);
    const wf = await createWorkflow(svc, textChain('Echo', py('return {"text": inputs["text"]}')));
    const templateIds = new Set<string>();
    for (const text of ['a', 'b']) {
      const caseId = await startCase(svc, wf.workflowId, { text });
      expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
      templateIds.add(caseId);
    }
    await svc.stop({ keepData: true });
    svc = undefined;

    // 40 copies, one falling due every 4 s from the fill's end: the first at once, the last 156 s later.
    fillStores(dataDir, { cases: 40, deletingPerSecond: 0.25 });
    const runs = runsOf(dataDir, templateIds);
    expect(runs.copies).toHaveLength(40);
    const due = runs.copies.slice(0, 3);
    const notDue = runs.copies.slice(-10);
    // Each copy has a history of its own before the server starts (the first is due as it starts).
    for (const run of runs.copies) expect(historyNodes(dataDir, run.runId)).toBeGreaterThan(0);

    // Started again with the engine's settings, as the service starts its own on this file.
    server = await startDevServer({ ...(await headlessDevServer(dataDir)), ...engine, namespace });
    const connection = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection, namespace });
      const until = Date.now() + 45_000;
      while ((await Promise.all(due.map((run) => exists(client, run)))).some(Boolean)) {
        if (Date.now() > until) throw new Error('the due copies were not deleted within 45 s');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      // Due 120-156 s after the fill: still there, and so are the templates (their timers are a day away).
      for (const run of [...notDue, ...runs.templates]) expect(await exists(client, run)).toBe(true);
      // The copy's history went with it, not its template's: each names its own tree inside the server's blobs.
      for (const run of due) expect(historyNodes(dataDir, run.runId)).toBe(0);
      for (const run of [...notDue, ...runs.templates]) expect(historyNodes(dataDir, run.runId)).toBeGreaterThan(0);
    } finally {
      await connection.close();
    }
  }, 240_000);
});
