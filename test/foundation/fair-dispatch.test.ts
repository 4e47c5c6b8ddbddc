import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tenantPriority } from '../../src/temporal/gateways/tenant-priority.js';

/**
 * The dev server as the service starts it (test/support/global-setup.ts passes `fairness`, as
 * `temporal.devServer.fairness` does): a backlog of one organization's workflow tasks does not
 * hold another organization's task behind it. No worker: the test polls the task queue itself
 * and reads the order tasks are handed out in.
 */
const BACKLOG = 60;
let connection: Connection;
let client: Client;
beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: 'default' });
});
afterAll(async () => {
  await connection.close();
});

async function start(taskQueue: string, organizationId: string): Promise<string> {
  const handle = await client.workflow.start('fairDispatchProbe', {
    taskQueue,
    workflowId: `fair-dispatch-${organizationId}-${randomUUID()}`,
    priority: tenantPriority(organizationId),
    // Nothing ever runs them: they go away on their own.
    workflowExecutionTimeout: '2 minutes',
  });
  return handle.workflowId;
}

/** The workflow id of the next task the queue hands out. */
async function poll(taskQueue: string): Promise<string> {
  // A long poll needs a deadline; tasks are waiting, so it answers at once.
  const task = await connection.withDeadline(Date.now() + 30_000, () =>
    connection.workflowService.pollWorkflowTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue },
      identity: 'fair-dispatch-test',
    }),
  );
  return task.workflowExecution?.workflowId ?? '';
}

describe('fair dispatch across organizations', () => {
  it("hands out organization B's task among the first, behind a backlog of A's", async () => {
    const taskQueue = `fair-dispatch-${randomUUID()}`;
    for (let i = 0; i < BACKLOG; i++) await start(taskQueue, 'org-a');
    const b = await start(taskQueue, 'org-b');

    const order: string[] = [];
    while (!order.includes(b) && order.length <= BACKLOG) order.push(await poll(taskQueue));
    // First in, first out would hand it out last (61st); fairly, it goes among the first: seen 2nd to 8th, behind the
    // few of A's the server had already read ahead when B's came (how many varies with timing).
    expect(order.length).toBeLessThanOrEqual(12);
  });
});
