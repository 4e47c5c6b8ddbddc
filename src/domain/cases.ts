import type { WorkflowGraph } from './graph.js';
import type { WaitingTask } from './human-tasks.js';
import type { TokenUsage } from './token-usage.js';

/**
 * Case types shared by the API, the case-run workflow and its activities.
 * Type-only and constants: the workflow bundle imports this module.
 */
export const caseStatuses = ['PENDING', 'QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'] as const;
export type CaseStatus = (typeof caseStatuses)[number];
export const terminalStatuses = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'] as const;
export type TerminalStatus = (typeof terminalStatuses)[number];

export function isTerminal(status: string): status is TerminalStatus {
  return (terminalStatuses as readonly string[]).includes(status);
}

export const caseSources = [
  'email-agent',
  'chat-agent',
  'scheduled',
  'api',
  'manual',
  'agent',
  'service-ai',
  'web-app',
] as const;

/**
 * pending: not reached yet; running; completed; failed; skipped: on a branch
 * not taken; cancelled: stopped by cancel / deadline / a failing sibling;
 * not_executed: never reached because the case ended first; waiting: a
 * human_task node waiting for a person's decision.
 */
export type NodeStatus =
  'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'skipped' | 'cancelled' | 'not_executed';

export interface NodeLog {
  level: 'debug' | 'info' | 'warning' | 'error';
  message: string;
  at: string;
}

export interface NodeError {
  message: string;
  /** e.g. timeout, error, output (Python), handler, input */
  kind?: string;
  traceback?: string;
}

/**
 * Which clock a node's startedAt / finishedAt come from. activity: the
 * worker's clock, read by the activity around the node's code. workflow:
 * Temporal's workflow clock (the time of the workflow task), for inline
 * nodes and nodes that ended without reporting times. upstream: the workflow
 * clock was behind the end of an upstream node (it stands still while local
 * activities run inside one workflow task), so the node takes that end: it
 * ran right after it.
 */
export type NodeClock = 'activity' | 'workflow' | 'upstream';
export const nodeClocks = ['activity', 'workflow', 'upstream'] as const satisfies readonly NodeClock[];

/** One node's execution data: what the audit shows under audit.nodes_execution_data. */
export interface NodeRecord {
  nodeId: string;
  name: string;
  handlerClass: string;
  status: NodeStatus;
  /** Inputs and outputs keyed by variable_name. */
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  logs: NodeLog[];
  error?: NodeError;
  attempts: number;
  /** LLM tokens the node consumed, over all its attempts (llm_agent nodes). */
  usage?: TokenUsage;
  startedAt?: string;
  finishedAt?: string;
  /** Where the times come from; absent while the node has not started. */
  clock?: NodeClock;
  /** A call_workflow node: the child case it started (the last one, when it was attempted again). */
  childCaseId?: string;
  /** Set on a rerun's node that did not run: its outputs are those this node recorded in the original case. */
  reused?: ReusedFrom;
}

/** The case and node a rerun's node took its recorded outputs from. */
export interface ReusedFrom {
  caseId: string;
  nodeId: string;
}

/** Where a rerun starts: from the start, or from the node that failed (reusing what completed before it). */
export const rerunFroms = ['start', 'failed'] as const;
export type RerunFrom = (typeof rerunFroms)[number];
/** Which version a rerun runs: the one the original ran, or the workflow's latest active one. */
export const rerunVersions = ['original', 'latest'] as const;
export type RerunVersion = (typeof rerunVersions)[number];

/** A bulk rerun: RUNNING until it has gone through its cases, cancelled, or stopped (FAILED). */
export const rerunBatchStatuses = ['RUNNING', 'COMPLETED', 'CANCELLED', 'FAILED'] as const;
export type RerunBatchStatus = (typeof rerunBatchStatuses)[number];
/** What became of one case in a bulk rerun. */
export const rerunOutcomes = ['started', 'skipped', 'failed'] as const;
export type RerunOutcome = (typeof rerunOutcomes)[number];

/** A node a rerun does not run again: the outputs it recorded in the original case. */
export interface ReusedNode {
  from: ReusedFrom;
  outputs: Record<string, unknown>;
}

export interface CaseError {
  message: string;
  nodeId?: string;
}

/** One entry of the case results record. */
export interface CaseResultEntry {
  value: unknown;
  type: string;
  displayName: string;
}
export type CaseResults = Record<string, CaseResultEntry>;

export interface CaseRunInput {
  caseId: string;
  organizationId: string;
  workspaceId: string;
  graph: WorkflowGraph;
  /** Validated inputs keyed by variable_name. */
  inputs: Record<string, unknown>;
  /** The case deadline: past it the case ends TIMED_OUT. */
  deadlineMs: number;
  callbackUrl?: string;
  /** Activity nodes running at once (cases.maxParallelNodes at start); absent: defaultMaxParallelNodes. */
  maxParallelNodes?: number;
  /** The longest the case may wait on people in all (cases.maxWaitMs at start); absent: defaultMaxWaitMs. */
  maxWaitMs?: number;
  /** The case run changes the starting code knew (caseRunRevision); absent on runs started before it was recorded. */
  revision?: number;
  /** A rerun from the failed node: nodes completed in the original case, by node id, taken as completed. */
  reused?: Record<string, ReusedNode>;
  /** How many call_workflow parents this case has above it; absent (0) for a case started over the API. */
  callDepth?: number;
  /**
   * The key that created the case, checked again before any node runs. Set only on runs that begin
   * after the request that asked for them (a delayed start, a case admitted from its queue or resumed
   * after a crash), so a key revoked meanwhile starts nothing.
   */
  creatorKeyId?: string;
}

/** How a case run ends: the workflow's result. */
export interface CaseRunOutcome {
  status: TerminalStatus;
  results: CaseResults;
}

/** Live progress (the workflow's query) and the shape written at the end. */
export interface CaseProgress {
  caseId: string;
  status: CaseStatus;
  nodes: Record<string, NodeRecord>;
  /** Node ids in the order they finished running (completed or failed). */
  executed: string[];
  failed: string[];
  running: string[];
  /** Not yet started and not skipped, in graph order. */
  remaining: string[];
  results: CaseResults;
  error?: CaseError;
  /** The tasks the case waits on now (live progress only). */
  waitingTasks?: WaitingTask[];
}

/** The end of a case known only by its outcome, with no node records (a run closed behind the service). */
export function outcomeOnly(
  caseId: string,
  status: TerminalStatus,
  end: { results: CaseResults; error?: CaseError },
): CaseProgress {
  return {
    caseId,
    status,
    nodes: {},
    executed: [],
    failed: [],
    running: [],
    remaining: [],
    results: end.results,
    ...(end.error ? { error: end.error } : {}),
  };
}

/** The ApplicationFailure type of a node's own failure (its details: NodeFailureDetails in activities/cases.ts). */
export const nodeFailedType = 'NodeFailed';

/** A case's end as its store recorded it. */
export interface RecordedEnd {
  status: TerminalStatus;
  results: CaseResults;
  error?: CaseError;
}

export interface FinalizeCaseInput {
  caseId: string;
  /** The case's workspace (whose event subscribers hear of the end); absent from runs started before it was passed. */
  workspaceId?: string;
  status: TerminalStatus;
  runId: string;
  progress: CaseProgress;
}

/** Name of the workflow's live-progress query. */

/** The per-case node cap of a run whose input does not carry one (started by an older API). */
export const defaultMaxParallelNodes = 8;

/** The deepest `cases.maxCallDepth` may be set: how many levels a call tree can have at most. */
export const maxCallDepthBound = 50;

/** Per-attempt limit of a node without `execution.timeout_ms`. */
export const defaultNodeTimeoutMs = 10_000;
/**
 * Nodes whose attempt limit is at most this run as local activities (no task
 * round trip, one marker event); longer ones as regular activities. While a
 * local activity runs, its workflow task stays open, so timers (the case
 * deadline), cancellation and queries wait for it: this bound is also how
 * late they can be.
 */
export const localActivityMaxMs = 10_000;
