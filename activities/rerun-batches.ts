import { ApplicationFailure } from '@temporalio/activity';
import { RerunBatchStopped } from '../src/cases/rerun-batch-service.js';
import {
  rerunBatchStoppedType,
  type RerunStepRequest,
  type RerunStepResult,
} from '../src/temporal/contracts/rerun-batch.js';
import type { ActivityDeps } from './deps.js';

export interface EndRerunBatchInput {
  batchId: string;
  status: 'COMPLETED' | 'CANCELLED' | 'FAILED';
  error?: string;
}

export interface RerunBatchActivities {
  rerunBatchStep(request: RerunStepRequest): Promise<RerunStepResult>;
  endRerunBatch(input: EndRerunBatchInput): Promise<void>;
}

/** A bulk rerun's steps and end, over the rerun batch service. */
export function createRerunBatchActivities(deps: ActivityDeps): RerunBatchActivities {
  const batches = deps.services.rerunBatches;
  return {
    async rerunBatchStep(request) {
      try {
        return await batches.step(request);
      } catch (err) {
        // Another attempt cannot help: the batch ends FAILED with the reason.
        if (err instanceof RerunBatchStopped)
          throw ApplicationFailure.create({ type: rerunBatchStoppedType, message: err.message, nonRetryable: true });
        throw err;
      }
    },
    async endRerunBatch(input) {
      await batches.end(input.batchId, input.status, input.error);
    },
  };
}
