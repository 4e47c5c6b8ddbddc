import { WorkflowNotFoundError } from '@temporalio/client';
import { caseWorkflowId, type CaseError, type CaseResults, type TerminalStatus } from '../domain/cases.js';
import type { Logger } from '../logging/logger.js';
import type { CaseRepo, CaseRecord } from '../store/case-repo.js';
import type { TemporalHandle } from '../temporal/connection.js';
import type { CaseRunWorkflow } from '../domain/cases.js';

const PAGE = 100;

interface ClosedRun {
  status: TerminalStatus;
  results: CaseResults;
  error?: CaseError;
}

/**
 * Closes RUNNING cases whose Temporal run ended without writing the case row (the store was down
 * longer than the final write's retries, the run was terminated, it hit a history limit): the row
 * takes Temporal's outcome, so no case stays RUNNING forever. A row the run did write is never
 * touched (finalize only writes non-terminal rows).
 */
export class CaseRunReconciler {
  constructor(private readonly deps: { repo: CaseRepo; temporal: TemporalHandle; logger: Logger }) {}

  /** One pass over every RUNNING case with a linked run; how many were closed. */
  async reconcile(): Promise<number> {
    let closed = 0;
    let afterId: string | undefined;
    for (;;) {
      const page = await this.deps.repo.listRunningWithRun(afterId, PAGE);
      for (const record of page) {
        try {
          if (await this.reconcileCase(record)) closed++;
        } catch (err) {
          this.deps.logger.error({ err, caseId: record.id }, 'could not reconcile a case with its run');
        }
      }
      if (page.length < PAGE) return closed;
      afterId = page[page.length - 1]?.id;
    }
  }

  private async reconcileCase(record: CaseRecord): Promise<boolean> {
    const runId = record.temporalRunId ?? undefined;
    const outcome = await this.closedRun(record.temporalWorkflowId ?? caseWorkflowId(record.id), runId);
    if (!outcome) return false;
    const finished = await this.deps.repo.finalize({
      caseId: record.id,
      status: outcome.status,
      runId: runId ?? '',
      progress: {
        caseId: record.id,
        status: outcome.status,
        nodes: {},
        executed: [],
        failed: [],
        running: [],
        remaining: [],
        results: outcome.results,
        ...(outcome.error ? { error: outcome.error } : {}),
      },
    });
    if (!finished) return false;
    this.deps.logger.warn(
      { caseId: record.id, runId, status: outcome.status },
      'closed a case whose run ended without recording it',
    );
    return true;
  }

  /** The run's outcome once Temporal reports it closed; undefined while it runs. */
  private async closedRun(workflowId: string, runId: string | undefined): Promise<ClosedRun | undefined> {
    const handle = this.deps.temporal.client.workflow.getHandle<CaseRunWorkflow>(workflowId, runId);
    let status: string;
    try {
      status = (await handle.describe()).status.name;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      return failed('The case run no longer exists in Temporal');
    }
    switch (status) {
      case 'RUNNING':
        return undefined;
      case 'COMPLETED': {
        const result = await handle.result();
        return { status: result.status, results: result.results };
      }
      case 'CANCELLED':
        return { status: 'CANCELLED', results: {} };
      case 'TIMED_OUT':
        return { status: 'TIMED_OUT', results: {}, error: { message: 'The case run timed out in Temporal' } };
      case 'TERMINATED':
        return failed('The case run was terminated in Temporal');
      default:
        return failed(`The case run ended in Temporal with status ${status} without recording the case`);
    }
  }
}

function failed(message: string): ClosedRun {
  return { status: 'FAILED', results: {}, error: { message } };
}
