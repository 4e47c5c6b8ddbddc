import { WorkflowNotFoundError } from '@temporalio/client';
import { Counter, type Registry } from 'prom-client';
import type { CaseError, CaseProgress, CaseResults, CaseRunInput, TerminalStatus } from '../../domain/cases.js';
import type { TemporalHandle } from '../connection.js';
import { caseProgressQuery, caseRunContract, caseWorkflowId } from '../contracts/case-run.js';
import type { WorkflowOf } from '../contracts/contract.js';
import { startWorkflow } from '../contracts/start.js';
import { boundedCall } from '../engine-health.js';
import { cancelIfRunning } from './cancel-if-running.js';
import { runTags, type RunTags } from '../contracts/search-attributes.js';
import { tenantPriority } from './tenant-priority.js';

/** A start is bounded, so an unreachable server gives a prompt answer instead of a request held by retries. */
const START_TIMEOUT_MS = 10_000;
/** How long a failed start waits to learn whether the run exists after all. */
const SETTLE_TIMEOUT_MS = 2_000;
/** A query waits while a local activity holds the workflow task: answer without live data rather than hang. */
const QUERY_TIMEOUT_MS = 1_000;
/** The reconciler's reads are bounded: one that never answers would otherwise stop every later pass. */
const RECONCILE_READ_TIMEOUT_MS = 15_000;

/** How a run is shown in the Temporal UI and what it is filtered by there. */
export interface CaseRunLabels {
  summary: string;
  details: string;
  tags: RunTags;
}

/** What is known of a case's run after its start call failed. */
export type StartOutcome = { run: 'started'; runId: string } | { run: 'absent' } | { run: 'unknown' };

/** A run's end as Temporal reports it, for a case whose run closed without recording it. */
export interface ClosedRun {
  status: TerminalStatus;
  results: CaseResults;
  error?: CaseError;
}

/** What the cases area needs of case runs in Temporal (CaseService and the reconciler take this, tests a fake). */
export interface CaseRunGateway {
  /** Starts the run (workflow id `case-<caseId>`, one per case), its first step after `startDelayMs` when given; its run id. */
  start(input: CaseRunInput, labels: CaseRunLabels, startDelayMs?: number): Promise<string>;
  /** After a failed start: does the case's run exist? A start that failed on our side may have been accepted. */
  settle(caseId: string): Promise<StartOutcome>;
  /** Live progress; undefined when the run does not answer in time. */
  progress(workflowId: string): Promise<CaseProgress | undefined>;
  /** Asks a running run to cancel; false when there is none running (closed or unknown to Temporal). */
  cancel(workflowId: string): Promise<boolean>;
  /** The run's outcome once closed (or gone); undefined while it runs. */
  closedRun(workflowId: string, runId: string | undefined): Promise<ClosedRun | undefined>;
}

type CaseRunWorkflow = WorkflowOf<typeof caseRunContract>;

/** Case runs on the process's Temporal client. */
export class TemporalCaseRuns implements CaseRunGateway {
  private readonly starts: Counter<'start'>;

  constructor(
    private readonly temporal: TemporalHandle,
    registry: Registry,
    /** Config temporal.caseWorkflowTaskTimeoutMs: how long a case's task may run here before the server hands it again. */
    private readonly workflowTaskTimeoutMs: number,
  ) {
    // Eager start falls back silently (no free workflow-task slot in the worker): this is how an operator sees it.
    this.starts = new Counter({
      name: 'caseflow_case_run_starts_total',
      help: 'Case runs started, by how: eager (the first task came back with the start), fallback (eager asked, not granted), delayed',
      labelNames: ['start'] as const,
      registers: [registry],
    });
  }

  async start(input: CaseRunInput, labels: CaseRunLabels, startDelayMs?: number): Promise<string> {
    const { client, taskQueue, searchAttributes } = this.temporal;
    const handle = await boundedCall(client, START_TIMEOUT_MS, 'the workflow start', () =>
      startWorkflow(client.workflow, caseRunContract, {
        taskQueue,
        workflowId: caseWorkflowId(input.caseId),
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowTaskTimeout: this.workflowTaskTimeoutMs,
        // Shown in the Temporal Web UI, so a run is recognisable without opening its input.
        staticSummary: labels.summary,
        staticDetails: labels.details,
        priority: tenantPriority(input.organizationId),
        // What the Temporal UI filters runs by; the workflow sets the case status again at the end.
        ...runTags(searchAttributes, labels.tags),
        // The client shares the worker's NativeConnection: the first task comes back with the start.
        // A delayed start has no first task yet (Temporal refuses the two together).
        ...(startDelayMs === undefined ? { requestEagerStart: true } : { startDelay: startDelayMs }),
      }),
    );
    this.starts.inc({ start: startDelayMs !== undefined ? 'delayed' : handle.eagerlyStarted ? 'eager' : 'fallback' });
    return handle.firstExecutionRunId;
  }

  async settle(caseId: string): Promise<StartOutcome> {
    const { client } = this.temporal;
    try {
      const existing = await boundedCall(client, SETTLE_TIMEOUT_MS, 'describe', () =>
        client.workflow.getHandle(caseWorkflowId(caseId)).describe(),
      );
      return { run: 'started', runId: existing.runId };
    } catch (err) {
      return err instanceof WorkflowNotFoundError ? { run: 'absent' } : { run: 'unknown' };
    }
  }

  async progress(workflowId: string): Promise<CaseProgress | undefined> {
    const { client } = this.temporal;
    const handle = client.workflow.getHandle<CaseRunWorkflow>(workflowId);
    return boundedCall(client, QUERY_TIMEOUT_MS, 'the progress query', () => handle.query(caseProgressQuery));
  }

  cancel(workflowId: string): Promise<boolean> {
    return cancelIfRunning(this.temporal.client.workflow.getHandle<CaseRunWorkflow>(workflowId));
  }

  async closedRun(workflowId: string, runId: string | undefined): Promise<ClosedRun | undefined> {
    const { client } = this.temporal;
    const handle = client.workflow.getHandle<CaseRunWorkflow>(workflowId, runId);
    const bounded = <T>(what: string, read: () => Promise<T>) =>
      boundedCall(client, RECONCILE_READ_TIMEOUT_MS, what, read);
    let status: string;
    try {
      status = (await bounded('describing a case run', () => handle.describe())).status.name;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      return failed('The case run no longer exists in Temporal');
    }
    switch (status) {
      case 'RUNNING':
        return undefined;
      case 'COMPLETED': {
        const result = await bounded("reading a case run's result", () => handle.result());
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
