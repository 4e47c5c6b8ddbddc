import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { searchAttributes } from '../../src/temporal/contracts/search-attributes.js';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server.js';
import { UNUSED_VISIBILITY_INDEXES } from '../../src/temporal/dev-server-visibility.js';
import { headlessDevServer } from '../support/dev-server.js';

const dataDirs: string[] = [];

async function start(dataDir: string, leanVisibility: boolean): Promise<DevServer> {
  return startDevServer({ ...(await headlessDevServer(dataDir)), leanVisibility });
}

function visibilityIndexes(dataDir: string): string[] {
  const db = new Database(path.join(dataDir, 'temporal.db'), { readonly: true });
  try {
    return db
      .prepare<[], { name: string }>(
        "select name from sqlite_master where type = 'index' and tbl_name = 'executions_visibility'",
      )
      .all()
      .map((row) => row.name);
  } finally {
    db.close();
  }
}

function freshDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-lean-vis-'));
  dataDirs.push(dir);
  return dir;
}

/** The ids of the runs a visibility query lists, once it lists `expected` (the visibility write is asynchronous). */
async function listedEventually(client: Client, query: string, expected: string): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const ids: string[] = [];
    for await (const run of client.workflow.list({ query })) ids.push(run.workflowId);
    if (ids.includes(expected)) return ids;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${query} never listed ${expected}`);
}

afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe('the embedded server without the visibility indexes no caseflow list needs', () => {
  it('drops them at the first start, lists runs by our search attributes and status, and stays lean across a restart', async () => {
    const dataDir = freshDir();
    let server = await start(dataDir, true);
    try {
      const indexes = visibilityIndexes(dataDir);
      for (const name of UNUSED_VISIBILITY_INDEXES) expect(indexes).not.toContain(name);
      for (const kept of ['default_idx', 'by_workflow_id', 'by_status', 'by_keyword_01', 'by_keyword_10']) {
        expect(indexes).toContain(kept);
      }

      const connection = await Connection.connect({ address: server.address });
      const client = new Client({ connection, namespace: 'default' });
      try {
        const handle = await client.workflow.start('caseRun', {
          taskQueue: 'no-worker-here',
          workflowId: 'lean-visibility-run',
          typedSearchAttributes: [
            { key: searchAttributes.organizationId, value: 'org_lean' },
            { key: searchAttributes.caseStatus, value: 'RUNNING' },
          ],
        });
        await listedEventually(
          client,
          `CaseflowOrganizationId = 'org_lean' AND ExecutionStatus = 'Running'`,
          handle.workflowId,
        );
        await handle.terminate('the test ends it');
        await listedEventually(
          client,
          `CaseflowCaseStatus = 'RUNNING' AND ExecutionStatus = 'Terminated'`,
          handle.workflowId,
        );
      } finally {
        await connection.close();
      }
      await server.stop();

      server = await start(dataDir, true);
      expect(visibilityIndexes(dataDir).filter((name) => UNUSED_VISIBILITY_INDEXES.includes(name))).toEqual([]);
      const again = await Connection.connect({ address: server.address });
      try {
        const client = new Client({ connection: again, namespace: 'default' });
        await listedEventually(client, `CaseflowOrganizationId = 'org_lean'`, 'lean-visibility-run');
      } finally {
        await again.close();
      }
    } finally {
      await server.stop();
    }
  }, 240_000);

  it('keeps every index the server made when the setting is off', async () => {
    const dataDir = freshDir();
    const server = await start(dataDir, false);
    try {
      const indexes = visibilityIndexes(dataDir);
      for (const name of UNUSED_VISIBILITY_INDEXES) expect(indexes).toContain(name);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
