import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { taskRefusedType, type TaskDecision, type TaskRefusal } from '../../domain/human-tasks.js';
import type { TemporalHandle } from '../connection.js';
import { completeTaskUpdate } from '../contracts/case-run.js';

/** The waiting case refused the decision (its Update validator), or its run is gone. */
export class TaskRefusedError extends Error {
  constructor(
    readonly reason: TaskRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'TaskRefusedError';
  }
}

/** What the tasks area needs of the case runs: hand a decision to the run waiting on the task. */
export interface TaskDecisionGateway {
  /** Resolves once the run recorded the decision and closed the task; TaskRefusedError when refused. */
  complete(temporalWorkflowId: string, decision: TaskDecision): Promise<void>;
}

/** Decisions as the case run's completeTask Update. */
export class TemporalTaskDecisions implements TaskDecisionGateway {
  constructor(private readonly temporal: TemporalHandle) {}

  async complete(temporalWorkflowId: string, decision: TaskDecision): Promise<void> {
    const handle = this.temporal.client.workflow.getHandle(temporalWorkflowId);
    try {
      await handle.executeUpdate(completeTaskUpdate, { args: [decision] });
    } catch (err) {
      const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type === taskRefusedType)
        throw new TaskRefusedError((cause.details?.[0] as TaskRefusal | undefined) ?? 'unknown', cause.message);
      // The run closed (ended, or was terminated) after the task was read as open.
      if (err instanceof WorkflowNotFoundError)
        throw new TaskRefusedError('cancelled', `The case of task ${decision.taskId} is no longer running`);
      throw err;
    }
  }
}
