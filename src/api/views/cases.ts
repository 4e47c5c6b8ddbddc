import type { z } from 'zod';
import type { CaseAudit, CaseStatus } from '../../cases/case-service.js';
import type { RerunBatchProgress } from '../../cases/rerun-batch-service.js';
import type { CaseResults } from '../../domain/cases.js';
import type { CaseRecord, CaseSummary } from '../../domain/case-records.js';
import type { Page } from '../../domain/page.js';
import type {
  auditSchema,
  cancelledSchema,
  caseListSchema,
  executedSchema,
  initiatedSchema,
  jobExecutedSchema,
  jobInitiatedSchema,
  jobStatusSchema,
  nodeDataSchema,
  notFinishedSchema,
  rerunBatchSchema,
  rerunStartedSchema,
  resultsBodySchema,
  statusSchema,
} from '../schemas/cases.js';

export function initiatedView(record: CaseRecord): z.infer<typeof initiatedSchema> {
  return {
    caseId: record.id,
    workflowVersionId: record.workflowVersionId,
    workflowVersionNumber: record.workflowVersionNumber,
    status: record.status,
  };
}

export function executedView(record: CaseRecord, temporalUiUrl: string | null): z.infer<typeof executedSchema> {
  return {
    caseId: record.id,
    status: record.status,
    workflowVersionId: record.workflowVersionId,
    workflowVersionNumber: record.workflowVersionNumber,
    startAt: record.startAt,
    temporalUiUrl,
  };
}

/** The started rerun, with the case it reruns and from where (as asked). */
export function rerunStartedView(
  started: { record: CaseRecord; temporalUiUrl: string | null },
  asked: Pick<z.infer<typeof rerunStartedSchema>, 'rerunOf' | 'rerunFrom'>,
): z.infer<typeof rerunStartedSchema> {
  return { ...executedView(started.record, started.temporalUiUrl), ...asked };
}

export function statusView({
  record,
  reruns,
  running,
  waiting,
  temporalUiUrl,
}: CaseStatus): z.infer<typeof statusSchema> {
  return {
    caseId: record.id,
    status: record.status,
    workflowId: record.workflowId,
    workflowVersionId: record.workflowVersionId,
    workflowVersionNumber: record.workflowVersionNumber,
    title: record.title,
    source: record.source,
    hookId: record.hookId,
    createdAt: record.createdAt,
    queuedAt: record.queuedAt,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
    startAt: record.startAt,
    scheduleId: record.scheduleId,
    currentNode: running[0] ?? null,
    runningNodes: running.map((node) => node.id),
    waitingTasks: waiting.map((task) => ({ ...task, dueAt: task.dueAt ?? null })),
    error: record.error,
    temporalUiUrl,
    rerunOf: record.rerunOf,
    rerunFrom: record.rerunFrom,
    reruns,
    parentCase: record.parent,
  };
}

export function jobInitiatedView(record: CaseRecord): z.infer<typeof jobInitiatedSchema> {
  return { jobExecutionId: record.id };
}

export function jobExecutedView(record: CaseRecord, temporalUiUrl: string | null): z.infer<typeof jobExecutedSchema> {
  return { jobExecutionId: record.id, ...executedView(record, temporalUiUrl) };
}

export function jobStatusView(status: CaseStatus): z.infer<typeof jobStatusSchema> {
  return { jobExecutionId: status.record.id, ...statusView(status) };
}

export function resultsView(record: CaseRecord, results: CaseResults): z.infer<typeof resultsBodySchema> {
  return { results, status: record.status };
}

/** The contract's exact 202 body while a case has not finished. */
export function notFinishedView(caseId: string, path: string): z.infer<typeof notFinishedSchema> {
  return {
    statusCode: 202,
    message: `Case ${caseId} has not finished yet`,
    timestamp: new Date().toISOString(),
    path,
    errorCode: '',
  };
}

export function cancelledView(record: CaseRecord): z.infer<typeof cancelledSchema> {
  return { caseId: record.id, status: record.status };
}

/** The contract's audit record: snake_case, every node keyed by id, the lists' heads as single fields. */
export function auditView({ record, nodes, lists }: CaseAudit): z.infer<typeof auditSchema> {
  const data: Record<string, z.infer<typeof nodeDataSchema>> = {};
  for (const n of nodes) {
    data[n.nodeId] = {
      node_id: n.nodeId,
      node_name: n.name,
      handler_class: n.handlerClass,
      status: n.status,
      inputs: n.inputs ?? null,
      outputs: n.outputs ?? null,
      logs: n.logs,
      started_at: n.startedAt ?? null,
      finished_at: n.finishedAt ?? null,
      clock: n.clock ?? null,
      attempts: n.attempts,
      usage: n.usage ?? null,
      error: n.error ?? null,
      reused: n.reused ? { case_id: n.reused.caseId, node_id: n.reused.nodeId } : null,
      child_case_id: n.childCaseId ?? null,
    };
  }
  return {
    caseId: record.id,
    status: record.status,
    nb_nodes: nodes.length,
    executed_nodes: lists.executed,
    nb_executed_nodes: lists.executed.length,
    running_node: lists.running[0] ?? '',
    next_node_to_execute: lists.remaining[0] ?? '',
    remaining_nodes_to_execute: lists.remaining,
    failed_nodes: lists.failed,
    nb_failed_nodes: lists.failed.length,
    audit: { nodes_execution_data: data },
  };
}

export function caseListView(page: Page<CaseSummary>): z.infer<typeof caseListSchema> {
  return {
    cases: page.items.map((c) => ({
      caseId: c.id,
      workspaceId: c.workspaceId,
      workflowId: c.workflowId,
      workflowVersionId: c.workflowVersionId,
      workflowVersionNumber: c.workflowVersionNumber,
      title: c.title,
      source: c.source,
      status: c.status,
      error: c.error,
      createdAt: c.createdAt,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
    })),
    nextCursor: page.nextCursor,
  };
}

export function rerunBatchView(progress: RerunBatchProgress): z.infer<typeof rerunBatchSchema> {
  const { batch, counts } = progress;
  const { createdFrom, createdBefore, ...filter } = batch.filter;
  const listed = (items: RerunBatchProgress['skipped']) =>
    items.map((item) => ({ caseId: item.caseId, reason: item.reason ?? '' }));
  return {
    batchId: batch.id,
    status: batch.status,
    from: batch.from,
    version: batch.version,
    filter: { ...filter, ...(createdFrom === undefined ? {} : { from: createdFrom }), to: createdBefore },
    matched: batch.matched,
    started: counts.started,
    skipped: counts.skipped,
    failed: counts.failed,
    pending: Math.max(0, batch.matched - counts.started - counts.skipped - counts.failed),
    skippedCases: listed(progress.skipped),
    failedCases: listed(progress.failed),
    error: batch.error,
    createdAt: batch.createdAt,
    finishedAt: batch.finishedAt,
    temporalWorkflowId: batch.temporalWorkflowId,
    temporalUiUrl: progress.temporalUiUrl,
  };
}
