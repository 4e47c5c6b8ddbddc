import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { GenerationRunRecord } from '../../domain/generation/run.js';
import type { TemporalHandle } from '../connection.js';
import type { WorkflowOf } from '../contracts/contract.js';
import {
  cancelGenerationSignal,
  generationRunContract,
  generationRunQuery,
  generationWorkflowId,
  type GenerationRunInput,
} from '../contracts/generation-run.js';
import { startWorkflow } from '../contracts/start.js';
import { runTags, type RunTags } from '../contracts/search-attributes.js';
import { tenantPriority } from './tenant-priority.js';

/** The run's workflow as Temporal has it: its live record and its execution status (RUNNING, COMPLETED…). */
export interface LiveGenerationRun {
  record: GenerationRunRecord;
  executionStatus: string;
}

/** What the generation area needs of its runs in Temporal (GenerationService takes this, tests a fake). */
export interface GenerationRunGateway {
  /** Starts a workflow's run; 'conflict' when that workflow has an active one (one at a time). */
  start(input: GenerationRunInput, tags: RunTags): Promise<'started' | 'conflict'>;
  /** The workflow's latest run as it runs (or ran); throws when it cannot be asked. */
  live(workflowId: string): Promise<LiveGenerationRun>;
  /** Tells the workflow's run to stop, keeping its applied work; false when it has no run. */
  cancel(workflowId: string): Promise<boolean>;
}

/** Generation runs on the process's Temporal client. */
export class TemporalGenerationRuns implements GenerationRunGateway {
  constructor(private readonly temporal: TemporalHandle) {}

  async start(input: GenerationRunInput, tags: RunTags): Promise<'started' | 'conflict'> {
    try {
      await startWorkflow(this.temporal.client.workflow, generationRunContract, {
        taskQueue: this.temporal.taskQueue,
        workflowId: generationWorkflowId(input.workflowId),
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        priority: tenantPriority(input.organizationId),
        ...runTags(this.temporal.searchAttributes, tags),
      });
      return 'started';
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'conflict';
      throw err;
    }
  }

  async live(workflowId: string): Promise<LiveGenerationRun> {
    const handle = this.temporal.client.workflow.getHandle<WorkflowOf<typeof generationRunContract>>(
      generationWorkflowId(workflowId),
    );
    const description = await handle.describe();
    return { record: await handle.query(generationRunQuery), executionStatus: description.status.name };
  }

  async cancel(workflowId: string): Promise<boolean> {
    try {
      await this.temporal.client.workflow.getHandle(generationWorkflowId(workflowId)).signal(cancelGenerationSignal);
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }
}
