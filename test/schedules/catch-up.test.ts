import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/net/free-port.js';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow } from '../cases/support.js';
import { py, textChain } from '../support/graphs.js';
import { createSchedule, deleteSchedule, ended, getSchedule, type ScheduleBody } from './support.js';

let svc: TestService | undefined;
let dataDir: string | undefined;
afterAll(async () => {
  await svc?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('a schedule across a restart of the service and its embedded Temporal server', () => {
  it('runs the firing missed while everything was down, within the catch-up window', async () => {
    const ports = { port: await freePort(), uiPort: await freePort() };
    const options = {
      embeddedTemporal: true,
      config: { schedules: { minIntervalSeconds: 1 }, temporal: { devServer: ports } },
    };
    const first = await startTestService(options);
    svc = first;
    dataDir = first.dataDir;
    const wf = await createWorkflow(first, textChain('Echo', py('return {"text": inputs["text"]}')));
    const schedule = await createSchedule(first, wf.workflowId, {
      intervalSeconds: 10,
      inputs: { text: 'missed' },
      catchupWindowSeconds: 600,
    });
    const downAt = Date.now();
    await first.stop({ keepData: true });
    svc = undefined;
    // Down across at least one firing time.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    const restartedAt = Date.now();
    const second = await startTestService({
      ...options,
      dataDir: first.dataDir,
      taskQueue: first.taskQueue,
      key: first.key,
    });
    svc = second;
    const get = () => getSchedule(second, schedule.scheduleId);
    const until = Date.now() + 60_000;
    let s = await get();
    // A firing due while everything was down, taken only once Temporal came back.
    const missed = (x: ScheduleBody) =>
      x.recentFirings.find((f) => {
        const at = Date.parse(f.scheduledAt);
        return at > downAt && at < restartedAt && Date.parse(f.firedAt) >= restartedAt && ended(f);
      });
    while (!missed(s) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      s = await get();
    }
    expect(missed(s), JSON.stringify(s.recentFirings)).toMatchObject({ status: 'started', caseStatus: 'COMPLETED' });
    expect(s.inEngine).toBe(true);
    await deleteSchedule(second, schedule.scheduleId);
  }, 180_000);
});
