import type { OpenedFiring, OpenFiringInput } from '../src/temporal/contracts/scheduled-case.js';
import type { ActivityDeps } from './deps.js';

/** Activities of a schedule's firing; the rules live in the schedule and case services. */
export function createScheduleActivities({ services }: ActivityDeps) {
  return {
    openScheduledFiring(input: OpenFiringInput): Promise<OpenedFiring> {
      return services.schedules.openFiring(input);
    },
    linkScheduledCase(input: { caseId: string; runId: string }): Promise<void> {
      return services.cases.linkRun(input.caseId, input.runId);
    },
  };
}

export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
