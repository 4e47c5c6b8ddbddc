import { ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { TemporalHandle } from '../connection.js';
import { retentionPurgeContract, retentionScheduleId } from '../contracts/retention-purge.js';

/** The Temporal Schedule that runs the retention workflow (RetentionService takes this). */
export interface RetentionScheduleGateway {
  /** Creates the schedule, or sets its interval when it exists (every worker start, any number of workers). */
  ensure(everyMinutes: number): Promise<void>;
}

export class TemporalRetentionSchedule implements RetentionScheduleGateway {
  constructor(private readonly temporal: TemporalHandle) {}

  async ensure(everyMinutes: number): Promise<void> {
    const { client, taskQueue } = this.temporal;
    const scheduleId = retentionScheduleId(taskQueue);
    const spec = { intervals: [{ every: `${everyMinutes} minutes` as const }] };
    try {
      await client.schedule.create({
        scheduleId,
        spec,
        action: {
          type: 'startWorkflow',
          workflowType: retentionPurgeContract.workflowType,
          workflowId: `retention-${taskQueue}`,
          taskQueue,
          args: [],
        },
        // One run at a time; a run still going when the next is due makes that one skip.
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
      });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec }));
    }
  }
}
