import type { z, ZodType } from 'zod';
import type { CaseRunChange } from '../case-run-changes.js';
import { defaultNodeTimeoutMs, type CaseResults, type NodeLog } from '../cases.js';
import type { WorkflowNode } from '../graph.js';
import type { PersonWait } from '../human-tasks.js';
import type { TokenUsage } from '../token-usage.js';
import type { NodeServices } from './services.js';

/**
 * What a node kind is (one `handler_class`), in one module per kind:
 * src/domain/node-kinds/<kind>.ts, listed in registry.ts. Graph validation,
 * the case engine and the docs all read the same entry.
 *
 * Kind modules are imported by the workflow bundle (the engine must know
 * which kinds run inline), so they import zod for types only and nothing with
 * Node built-ins or side effects: an activity kind reaches I/O through the
 * NodeServices it is handed at run time.
 */

/** zod itself, handed to a kind's `process` builder (zod would add ~600 KiB, a third, to the workflow bundle). */
export type Zod = typeof z;

/** What a kind gets for one node of one case. */
export interface NodeContext<Process> {
  caseId: string;
  organizationId: string;
  workspaceId: string;
  node: WorkflowNode;
  /** The node's `process`, valid against the kind's schema. */
  process: Process;
  /** Resolved by the engine (variable mappings, fixed values, parents' outputs), keyed by variable_name. */
  inputs: Record<string, unknown>;
  /** The case's validated inputs, keyed by variable_name: read by the entry kind. */
  caseInputs: Record<string, unknown>;
  /** 1 for the first attempt. */
  attempt: number;
  /** Activity kinds: when this attempt's activity times out (epoch ms); work queued past it is dropped. */
  deadline?: number;
  /** Activity kinds: aborted when the activity is cancelled (the case ended, or its deadline passed). */
  signal?: AbortSignal;
}

export interface NodeRunResult {
  /** Keyed by the node's output variable_name; a route's bool output decides its branch. */
  outputs: Record<string, unknown>;
  logs: NodeLog[];
  /** Tokens an LLM call of the node consumed (recorded in the case audit). */
  usage?: TokenUsage;
}

/** How long one attempt may take and how many attempts a node gets. */
export interface NodeExecution {
  timeoutMs: number;
  maxAttempts: number;
}

/** What describes a kind, whatever its `process` type. */
export interface NodeKindInfo {
  readonly handlerClass: string;
  /** The node `type` this class belongs to (graph validation holds nodes to it). */
  readonly nodeType: string;
  /** One line for the docs and the generation agents. */
  readonly describe: string;
  /** Where a case starts: nodes of this kind take the case inputs instead of parents' outputs. */
  readonly entry?: boolean;
  /** What a completed node of this kind adds to the case results. */
  readonly results?: (node: WorkflowNode, outputs: Record<string, unknown>) => CaseResults;
  /** Limits for nodes of this kind that do not set `execution` (default: 10 s, one attempt). */
  readonly defaultExecution?: NodeExecution;
}

/** A problem with one node, beyond its `process` schema; `path` is relative to the node (`output_schema`, `process.due`). */
export interface NodeProblem {
  path: string;
  message: string;
}

/** A node's own `execution`, else its kind's default, else the engine's (10 s, one attempt). */
export function nodeExecution(node: WorkflowNode, kind: NodeKindInfo | undefined): NodeExecution {
  return {
    timeoutMs: node.execution?.timeout_ms ?? kind?.defaultExecution?.timeoutMs ?? defaultNodeTimeoutMs,
    maxAttempts: node.execution?.max_attempts ?? kind?.defaultExecution?.maxAttempts ?? 1,
  };
}

interface KindDefinition<Schema extends ZodType> extends NodeKindInfo {
  /** The schema of the node's `process`, checked when a workflow is saved and, for activity kinds, at each run. */
  readonly process: (zod: Zod) => Schema;
  /** Save-time checks that need the whole node (its schemas, routes), run once `process` passed its schema. */
  readonly check?: (node: WorkflowNode, process: z.output<Schema>) => NodeProblem[];
}

/**
 * Runs inside the workflow: deterministic, no I/O, no clock, no randomness.
 * It gets `process` as saved (validated then, not parsed again: the bundle has
 * no zod), so its schema must not transform values or fill in defaults.
 */
export interface InlineKindDefinition<Schema extends ZodType> extends KindDefinition<Schema> {
  readonly evaluate: (context: NodeContext<z.output<Schema>>) => NodeRunResult;
}

/** Runs in the `runNode` activity with `process` parsed by its schema; failures throw NodeFailure. */
export interface ActivityKindDefinition<Schema extends ZodType> extends KindDefinition<Schema> {
  readonly run: (context: NodeContext<z.output<Schema>>, services: NodeServices) => Promise<NodeRunResult>;
}

/**
 * Waits in the workflow for a person (human_task): `prepare` says, inside the
 * workflow and as deterministically as an inline kind, what to ask and until
 * when; the case run opens the task and waits durably for the decision (a
 * Temporal Update) or the due time, which is neither inline nor an activity.
 * `now` is the workflow clock; `inForce` says whether a change of the case
 * run's commands applies to this run (asked only where the outcome differs,
 * so a run recorded before the change replays its old path).
 */
export interface WaitingKindDefinition<Schema extends ZodType> extends KindDefinition<Schema> {
  readonly prepare: (context: NodeContext<z.output<Schema>>, now: number, inForce: ChangeInForce) => PersonWait;
}

/** Whether a change of the case run's commands applies to the run asking (see case-run-changes.ts). */
export type ChangeInForce = (change: CaseRunChange) => boolean;

/**
 * Run by the case engine itself as a child case (a Temporal child workflow): no `evaluate`, no `run`;
 * the workflow knows the kind by `runs` (workflows/child-case.ts).
 */
export type ChildKindDefinition<Schema extends ZodType> = KindDefinition<Schema>;

/** A registered kind; `process` is erased to unknown so kinds of every process type share one registry. */
export type NodeKind = InlineNodeKind | ActivityNodeKind | WaitingNodeKind | ChildNodeKind;

interface RegisteredKind extends NodeKindInfo {
  processSchema(zod: Zod): ZodType;
  check?(node: WorkflowNode, process: unknown): NodeProblem[];
}

export interface InlineNodeKind extends RegisteredKind {
  readonly runs: 'inline';
  evaluate(context: NodeContext<unknown>): NodeRunResult;
}

export interface ActivityNodeKind extends RegisteredKind {
  readonly runs: 'activity';
  run(context: NodeContext<unknown>, services: NodeServices): Promise<NodeRunResult>;
}

export interface WaitingNodeKind extends RegisteredKind {
  readonly runs: 'waiting';
  prepare(context: NodeContext<unknown>, now: number, inForce: ChangeInForce): PersonWait;
}

/** Whether the case run waits on a person for nodes of this kind (the question the engine asks). */
export function isWaitingKind(kind: NodeKind | undefined): kind is WaitingNodeKind {
  return kind?.runs === 'waiting';
}

export interface ChildNodeKind extends RegisteredKind {
  readonly runs: 'child';
}

/**
 * The one place the erased `process` gets its type back. Sound because every
 * caller passes a process that passed this kind's schema: the activity parses
 * it, and the workflow only runs saved versions, validated when saved.
 */
function withProcess<Schema extends ZodType>(context: NodeContext<unknown>): NodeContext<z.output<Schema>> {
  return { ...context, process: context.process as z.output<Schema> };
}

/** The parts every kind registers alike: its info, its process schema and its save-time check. */
function registered<Schema extends ZodType>(definition: KindDefinition<Schema>): RegisteredKind {
  const { process, check, ...info } = definition;
  return {
    ...info,
    processSchema: process,
    ...(check ? { check: (node: WorkflowNode, saved: unknown) => check(node, saved as z.output<Schema>) } : {}),
  };
}

export function inlineKind<Schema extends ZodType>(definition: InlineKindDefinition<Schema>): InlineNodeKind {
  const { evaluate, ...rest } = definition;
  return {
    ...registered(rest),
    runs: 'inline',
    evaluate: (context) => evaluate(withProcess<Schema>(context)),
  };
}

export function activityKind<Schema extends ZodType>(definition: ActivityKindDefinition<Schema>): ActivityNodeKind {
  const { run, ...rest } = definition;
  return {
    ...registered(rest),
    runs: 'activity',
    run: (context, services) => run(withProcess<Schema>(context), services),
  };
}

export function waitingKind<Schema extends ZodType>(definition: WaitingKindDefinition<Schema>): WaitingNodeKind {
  const { prepare, ...rest } = definition;
  return {
    ...registered(rest),
    runs: 'waiting',
    prepare: (context, now, inForce) => prepare(withProcess<Schema>(context), now, inForce),
  };
}

export function childKind<Schema extends ZodType>(definition: ChildKindDefinition<Schema>): ChildNodeKind {
  const { process, ...info } = definition;
  return { ...info, runs: 'child', processSchema: process };
}

/**
 * The NodeFailure kind of a node that never ran because its runner was saturated (a full
 * queue, or a deadline that came first): back-pressure, retried without costing an attempt.
 */
export const busyFailureKind = 'busy';

export interface NodeFailureOptions {
  /** e.g. configuration, input, output, limit, timeout (Python), handler. */
  kind: string;
  /** Logs gathered before the failure. */
  logs?: NodeLog[];
  traceback?: string;
  /** false when another attempt cannot help (bad configuration, invalid output); default true. */
  retryable?: boolean;
  /** How long the service asked to wait before the next attempt (an LLM's 429 Retry-After). */
  retryAfterMs?: number;
  /** Tokens the failed attempt consumed all the same. */
  usage?: TokenUsage;
}

/** How a kind fails a node; anything else thrown is an unexpected error and fails it with kind `handler`. */
export class NodeFailure extends Error {
  readonly kind: string;
  readonly logs: NodeLog[];
  readonly traceback?: string;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly usage?: TokenUsage;

  constructor(message: string, options: NodeFailureOptions) {
    super(message);
    this.name = 'NodeFailure';
    this.kind = options.kind;
    this.logs = options.logs ?? [];
    this.traceback = options.traceback;
    this.retryable = options.retryable ?? true;
    this.retryAfterMs = options.retryAfterMs;
    this.usage = options.usage;
  }
}
