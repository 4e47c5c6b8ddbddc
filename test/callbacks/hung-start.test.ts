import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DeliverySweep } from '../../src/callbacks/delivery-sweep.js';
import { TemporalCallbackDeliveries } from '../../src/temporal/gateways/callback-deliveries.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { unstartedRedelivery } from './support.js';

/** Short for the test; the service's is 15 s. */
const CALL_TIMEOUT_MS = 1000;

describe('a Temporal frontend that accepts the connection and never answers', () => {
  let proxy: TcpProxy;
  let connection: NativeConnection;
  let direct: NativeConnection;
  const taskQueue = `hung-start-${randomUUID()}`;

  beforeAll(async () => {
    const [host = '127.0.0.1', port] = inject('temporalAddress').split(':');
    proxy = await startTcpProxy({ host, port: Number(port) });
    connection = await NativeConnection.connect({ address: `127.0.0.1:${proxy.port}` });
    direct = await NativeConnection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    proxy?.unstall();
    await connection?.close();
    await direct?.close();
    await proxy?.close();
  });

  it('bounds each start: a sweep pass ends at the first start left unanswered; the next pass begins with it and starts them all', async () => {
    const client = new Client({ connection, namespace: 'default' });
    const deliveries = new TemporalCallbackDeliveries(
      { client, namespace: 'default', taskQueue, searchAttributes: false },
      CALL_TIMEOUT_MS,
    );
    const rows = [unstartedRedelivery(), unstartedRedelivery()];
    const errors: string[] = [];
    /** Where each pass began: after the delivery of this id, or from the oldest (undefined). */
    const passesBegan: Array<string | undefined> = [];
    const sweep = new DeliverySweep({
      repo: {
        overdueDeliveries: (_dueBefore, after) => {
          passesBegan.push(after?.id);
          return Promise.resolve(rows);
        },
        failPending: () => Promise.resolve(false),
      },
      tenancy: {
        findWorkspace: (id) => Promise.resolve({ id, organizationId: randomUUID(), name: 'w', createdAt: '' }),
      },
      deliveries,
      runs: { closedRun: () => Promise.resolve(undefined) },
      graceMs: 0,
      // A full page: without the stop the next pass would begin after its last row.
      batch: rows.length,
      logger: pino({ level: 'error' }, { write: (line: string) => errors.push(line) }),
      registry: new Registry(),
    });
    // Read while it answers (kept for minutes), so the pass's first call to the stalled frontend is a start.
    expect(await deliveries.retentionMs()).toBeGreaterThan(0);

    proxy.stall();
    const began = performance.now();
    expect(await sweep.sweep()).toBe(0);
    expect(performance.now() - began).toBeLessThan(CALL_TIMEOUT_MS + 5000);
    // The second row's start was not tried: it would have waited out the same deadline.
    expect(errors.map((line) => (JSON.parse(line) as { deliveryId: string }).deliveryId)).toEqual([rows[0]?.id]);

    proxy.unstall();
    // Started by this pass, or by the stalled pass's request, delivered late (a start past its deadline may land).
    await sweep.sweep();
    expect(passesBegan).toEqual([undefined, undefined]);
    const observer = new Client({ connection: direct, namespace: 'default' });
    for (const row of rows) {
      const handle = observer.workflow.getHandle(row.workflowId);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await handle.terminate('test: no worker serves this queue');
    }
  }, 60_000);
});
