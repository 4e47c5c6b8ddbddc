import type { TemporalHandle } from '../connection.js';
import { startWorkflow } from '../contracts/start.js';
import { rerunBatchContract, rerunBatchWorkflowId, type RerunBatchInput } from '../contracts/rerun-batch.js';
import { runTags, type RunTags } from '../contracts/search-attributes.js';
import { cancelIfRunning } from './cancel-if-running.js';

/** How a batch's run is shown in the Temporal UI and what it is filtered by there. */
export interface RerunBatchLabels {
  summary: string;
  details: string;
  tags: RunTags;
}

/** What bulk reruns need of their runs in Temporal (RerunBatchService takes this, tests a fake). */
export interface RerunBatchGateway {
  /** Starts the batch's run (workflow id `case-rerun-<batchId>`); its run id. */
  start(input: RerunBatchInput, labels: RerunBatchLabels): Promise<string>;
  /** Asks the batch's run to stop; false when it is not running. */
  cancel(batchId: string): Promise<boolean>;
}

/** Bulk rerun runs on the process's Temporal client. */
export class TemporalRerunBatches implements RerunBatchGateway {
  constructor(private readonly temporal: TemporalHandle) {}

  async start(input: RerunBatchInput, labels: RerunBatchLabels): Promise<string> {
    const { client, taskQueue, searchAttributes } = this.temporal;
    const handle = await startWorkflow(client.workflow, rerunBatchContract, {
      taskQueue,
      workflowId: rerunBatchWorkflowId(input.batchId),
      args: [input],
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      staticSummary: labels.summary,
      staticDetails: labels.details,
      ...runTags(searchAttributes, labels.tags),
    });
    return handle.firstExecutionRunId;
  }

  cancel(batchId: string): Promise<boolean> {
    return cancelIfRunning(this.temporal.client.workflow.getHandle(rerunBatchWorkflowId(batchId)));
  }
}
