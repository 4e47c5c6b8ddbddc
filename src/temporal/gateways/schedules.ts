import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleOptions,
  type ScheduleSpec,
} from '@temporalio/client';
import type { OverlapPolicy, ScheduleTiming } from '../../domain/schedules.js';
import { DomainError } from '../../errors.js';
import type { TemporalHandle } from '../connection.js';
import { firingWorkflowId, scheduledCaseContract, temporalScheduleId } from '../contracts/scheduled-case.js';
import { runTags } from '../contracts/search-attributes.js';

/** What a Temporal Schedule is made from: a caseflow schedule's timing, policies and owner. */
export interface ScheduleDefinition {
  id: string;
  organizationId: string;
  workspaceId: string;
  workflowId: string;
  title: string | null;
  timing: ScheduleTiming;
  overlap: OverlapPolicy;
  catchupWindowMs: number;
  paused: boolean;
}

/** What Temporal says of a schedule now. */
export interface ScheduleState {
  paused: boolean;
  note: string | null;
  nextRunTimes: string[];
  /** Firings whose workflow is running now. */
  running: number;
  /** Firings skipped because one was running (overlap skip) or missed beyond the catch-up window. */
  skippedOverlap: number;
  missedCatchupWindow: number;
}

/** What the schedules area needs of Temporal Schedules (the service takes this, tests may take a fake). */
export interface ScheduleGateway {
  create(schedule: ScheduleDefinition): Promise<void>;
  /** Replaces the schedule's timing, policies and paused state; creates it when Temporal has none (a repair). */
  update(schedule: ScheduleDefinition): Promise<void>;
  /** Undefined when Temporal has no such schedule. */
  describe(scheduleId: string): Promise<ScheduleState | undefined>;
  pause(scheduleId: string, note: string): Promise<void>;
  unpause(scheduleId: string, note: string): Promise<void>;
  /** Fires now, whatever runs already. */
  trigger(scheduleId: string): Promise<void>;
  /** Fires every time of the range now, one after another. */
  backfill(scheduleId: string, start: Date, end: Date): Promise<void>;
  /** Deletes it; a schedule Temporal does not have counts as deleted. */
  delete(scheduleId: string): Promise<void>;
}

const overlaps: Record<OverlapPolicy, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
  cancel_previous: ScheduleOverlapPolicy.CANCEL_OTHER,
};

function specOf(timing: ScheduleTiming): ScheduleSpec {
  const when: ScheduleSpec =
    timing.cron !== undefined
      ? { cronExpressions: [timing.cron] }
      : { intervals: [{ every: timing.intervalMs, offset: timing.offsetMs ?? 0 }] };
  return {
    ...when,
    timezone: timing.timeZone,
    ...(timing.startAt ? { startAt: new Date(timing.startAt) } : {}),
    ...(timing.endAt ? { endAt: new Date(timing.endAt) } : {}),
  };
}

/** A call on a schedule Temporal lacks (a crash between the store and Temporal) is a 409 saying how to repair it. */
async function existing(scheduleId: string, call: () => Promise<void>): Promise<void> {
  try {
    await call();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    throw DomainError.conflict(
      `Schedule ${scheduleId} is missing in Temporal: PATCH it to create it again, or delete it`,
      {
        reason: 'SCHEDULE_NOT_IN_ENGINE',
      },
    );
  }
}

/** Temporal Schedules on the process's client, one per caseflow schedule (`schedule-<id>`). */
export class TemporalSchedules implements ScheduleGateway {
  constructor(private readonly temporal: TemporalHandle) {}

  private options(s: ScheduleDefinition) {
    const { taskQueue, searchAttributes } = this.temporal;
    return {
      spec: specOf(s.timing),
      action: {
        type: 'startWorkflow' as const,
        workflowType: scheduledCaseContract.workflowType,
        workflowId: firingWorkflowId(s.id),
        taskQueue,
        args: [{ scheduleId: s.id }],
        staticSummary: `schedule ${s.title ?? s.id}`,
        // The firings are found in the Temporal UI by the same tags as the cases.
        ...runTags(searchAttributes, {
          organizationId: s.organizationId,
          workspaceId: s.workspaceId,
          workflowId: s.workflowId,
          source: 'scheduled',
        }),
      },
      policies: { overlap: overlaps[s.overlap], catchupWindow: s.catchupWindowMs },
    } satisfies Omit<ScheduleOptions, 'scheduleId'>;
  }

  async create(s: ScheduleDefinition): Promise<void> {
    await this.temporal.client.schedule.create({
      scheduleId: temporalScheduleId(s.id),
      ...this.options(s),
      state: { paused: s.paused, note: s.paused ? 'created paused' : undefined },
    });
  }

  async update(s: ScheduleDefinition): Promise<void> {
    try {
      await this.handle(s.id).update((previous) => ({
        ...this.options(s),
        state: { paused: s.paused, note: previous.state.note },
      }));
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      await this.create(s);
    }
  }

  async describe(scheduleId: string): Promise<ScheduleState | undefined> {
    try {
      const d = await this.handle(scheduleId).describe();
      return {
        paused: d.state.paused,
        note: d.state.note ?? null,
        nextRunTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
        running: d.info.runningActions.length,
        skippedOverlap: d.info.numActionsSkippedOverlap,
        missedCatchupWindow: d.info.numActionsMissedCatchupWindow,
      };
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return undefined;
      throw err;
    }
  }

  pause(scheduleId: string, note: string): Promise<void> {
    return existing(scheduleId, () => this.handle(scheduleId).pause(note));
  }

  unpause(scheduleId: string, note: string): Promise<void> {
    return existing(scheduleId, () => this.handle(scheduleId).unpause(note));
  }

  trigger(scheduleId: string): Promise<void> {
    return existing(scheduleId, () => this.handle(scheduleId).trigger(ScheduleOverlapPolicy.ALLOW_ALL));
  }

  backfill(scheduleId: string, start: Date, end: Date): Promise<void> {
    return existing(scheduleId, () =>
      this.handle(scheduleId).backfill({ start, end, overlap: ScheduleOverlapPolicy.BUFFER_ALL }),
    );
  }

  async delete(scheduleId: string): Promise<void> {
    try {
      await this.handle(scheduleId).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }

  private handle(scheduleId: string) {
    return this.temporal.client.schedule.getHandle(temporalScheduleId(scheduleId));
  }
}
