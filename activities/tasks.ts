import type { CloseTaskInput, EscalateTaskInput, OpenTaskInput } from '../src/domain/human-tasks.js';
import type { ActivityDeps } from './deps.js';

export interface TaskActivities {
  openHumanTask(input: OpenTaskInput): Promise<void>;
  closeHumanTask(input: CloseTaskInput): Promise<void>;
  escalateHumanTask(input: EscalateTaskInput): Promise<void>;
}

/** The task rows of human_task nodes: written by the tasks service, for the case run. */
export function createTaskActivities(deps: ActivityDeps): TaskActivities {
  const { tasks } = deps.services;
  return {
    openHumanTask: (input) => tasks.open(input),
    closeHumanTask: (input) => tasks.close(input),
    escalateHumanTask: (input) => tasks.escalate(input),
  };
}
