import { edgeTaken, indexGraph, resolveNodeInputs, type GraphIndex } from './case-graph.js';
import type {
  CaseError,
  CaseProgress,
  CaseRunInput,
  NodeError,
  NodeLog,
  NodeRecord,
  ReusedNode,
  TerminalStatus,
} from './cases.js';
import type { WorkflowGraph, WorkflowNode } from './graph.js';
import { isEntryNode, nodeKinds } from './node-kinds/registry.js';
import { addUsage, noUsage, type TokenUsage } from './token-usage.js';
import { handlerClassName } from './vocabulary.js';

/** A node's end as the activity reports it (times are the activity's own). */
export interface NodeCompletion {
  outputs: Record<string, unknown>;
  logs: NodeLog[];
  usage?: TokenUsage;
  startedAt?: string;
  finishedAt?: string;
}

/** What a failing activity reported besides the error. */
export interface NodeFailureReport {
  logs: NodeLog[];
  usage?: TokenUsage;
  startedAt: string;
  finishedAt: string;
}

/** How the run around the graph ended, besides the nodes' own outcomes. */
export interface RunEnding {
  deadlinePassed: boolean;
  /** The run was cancelled (by a request, a failure or the deadline). */
  cancelled: boolean;
  deadlineMs: number;
}

/** What a scheduler holds, to resume it elsewhere (the fused last node's activity: src/domain/last-node.ts). */
export interface SchedulerSnapshot {
  state: CaseProgress;
  outputs: Record<string, Record<string, unknown>>;
  decided: string[];
}

/** A case's last activity node and what follows it: the graph of it and its output nodes, and the scheduler. */
export interface LastNodeTail {
  graph: WorkflowGraph;
  snapshot: SchedulerSnapshot;
}

/**
 * The case engine's bookkeeping, without Temporal: which nodes are ready,
 * which are skipped after a route decision, the live progress and how the
 * case ends. Pure and deterministic (the workflow bundle imports it); the
 * caller passes the times in.
 *
 * Nodes run once every parent has completed or been skipped; a route's bool
 * output picks its edges (or their complement), and a node left with no
 * taken incoming edge is skipped, which propagates. A rerun's reused node
 * (never an entry) is completed with its recorded outputs when it becomes
 * ready, without running, and releases its children at once.
 */
export class CaseScheduler {
  private readonly index: GraphIndex;
  private readonly outputs = new Map<string, Record<string, unknown>>();
  /** Nodes handed out to run or skipped: each is decided once. */
  private readonly decided = new Set<string>();
  private failure: CaseError | undefined;
  private readonly state: CaseProgress;

  constructor(
    private readonly input: Pick<CaseRunInput, 'caseId' | 'graph' | 'inputs' | 'reused'>,
    resumed?: SchedulerSnapshot,
  ) {
    this.index = indexGraph(input.graph);
    if (resumed) {
      this.state = resumed.state;
      for (const [id, outputs] of Object.entries(resumed.outputs)) this.outputs.set(id, outputs);
      for (const id of resumed.decided) this.decided.add(id);
      return;
    }
    this.state = {
      caseId: input.caseId,
      status: 'RUNNING',
      nodes: {},
      executed: [],
      failed: [],
      running: [],
      remaining: [],
      results: {},
    };
    for (const node of Object.values(input.graph.nodes)) {
      this.state.nodes[node.id] = {
        nodeId: node.id,
        name: node.name,
        handlerClass: handlerClassName(node),
        status: 'pending',
        logs: [],
        attempts: 0,
      };
    }
  }

  /**
   * The nodes to run first: the entry nodes. A node no edge leads to (other
   * than an entry) can never run and is skipped. Without an entry node the
   * case fails and nothing runs.
   */
  start(): string[] {
    const entries = Object.values(this.input.graph.nodes).filter(isEntryNode);
    if (entries.length === 0) {
      this.failure = { message: 'The workflow has no input node' };
      return [];
    }
    for (const node of entries) this.decided.add(node.id);
    const ready = entries.map((node) => node.id);
    for (const id of this.index.order) {
      if (!this.decided.has(id) && (this.index.incoming.get(id) ?? []).length === 0) {
        this.decided.add(id);
        ready.push(...this.skip(id));
      }
    }
    return ready;
  }

  node(id: string): WorkflowNode {
    return this.input.graph.nodes[id] as WorkflowNode;
  }

  /**
   * The node starts running at `at` (the workflow clock), or at the end of
   * its latest upstream node when the clock is behind it: a node never
   * starts before the nodes it waits for have finished.
   */
  begin(id: string, at: string): void {
    const rec = this.record(id);
    rec.status = 'running';
    const upstreamEnd = this.upstreamEnd(id);
    const behind = upstreamEnd !== undefined && at < upstreamEnd;
    rec.startedAt = behind ? upstreamEnd : at;
    rec.clock = behind ? 'upstream' : 'workflow';
    this.state.running.push(id);
  }

  /** The latest finishedAt of the node's upstream nodes (ISO times in UTC compare as strings). */
  private upstreamEnd(id: string): string | undefined {
    let latest: string | undefined;
    for (const edge of this.index.incoming.get(id) ?? []) {
      const end = this.record(edge.from_node_id).finishedAt;
      if (end !== undefined && (latest === undefined || end > latest)) latest = end;
    }
    return latest;
  }

  /** Its inputs by variable_name: the case inputs for an entry node, else resolved from upstream outputs. */
  inputsOf(id: string): Record<string, unknown> {
    const node = this.node(id);
    const inputs = isEntryNode(node) ? this.input.inputs : resolveNodeInputs(this.index, node, this.outputs);
    this.record(id).inputs = inputs;
    return inputs;
  }

  /** A waiting kind's node waits for a person (true) or runs on (false): the audit says which. */
  waiting(id: string, waiting: boolean): void {
    this.record(id).status = waiting ? 'waiting' : 'running';
  }

  /** A call_workflow node started this child case (shown in the audit, live and at the end). */
  linkChild(id: string, childCaseId: string): void {
    this.record(id).childCaseId = childCaseId;
  }

  attempt(id: string, attempt: number): void {
    this.record(id).attempts = attempt;
  }

  /** Adds the tokens an attempt consumed (every attempt counts, a failed one too). */
  spend(id: string, usage: TokenUsage | undefined): void {
    if (!usage) return;
    const rec = this.record(id);
    rec.usage = addUsage(rec.usage ?? noUsage, usage);
  }

  complete(id: string, completion: NodeCompletion): void {
    const rec = this.record(id);
    if (completion.startedAt && completion.finishedAt) {
      rec.startedAt = completion.startedAt;
      rec.finishedAt = completion.finishedAt;
      rec.clock = 'activity';
    }
    this.completeWith(id, completion.outputs);
    rec.logs = completion.logs;
    this.spend(id, completion.usage);
    this.state.executed.push(id);
  }

  /** The node is completed with these outputs: its children read them, an output node adds its results. */
  private completeWith(id: string, outputs: Record<string, unknown>): void {
    const rec = this.record(id);
    rec.outputs = outputs;
    rec.status = 'completed';
    this.outputs.set(id, outputs);
    const node = this.node(id);
    const results = nodeKinds.of(node)?.results?.(node, outputs);
    if (results) Object.assign(this.state.results, results);
  }

  /**
   * A node that became ready: to run, or, when the rerun reuses it, completed
   * now with its recorded outputs (not in `executed`: it did not run), and
   * its children that this releases in its place.
   */
  private handOut(id: string): string[] {
    const reused: ReusedNode | undefined = this.input.reused?.[id];
    if (!reused) return [id];
    this.completeWith(id, reused.outputs);
    this.record(id).reused = reused.from;
    return this.release(id);
  }

  /** The node failed; true when it is the case's first failure (the caller then stops the other branches). */
  fail(id: string, error: NodeError, report?: NodeFailureReport): boolean {
    const rec = this.record(id);
    rec.status = 'failed';
    rec.error = error;
    if (report) {
      rec.logs = report.logs;
      this.spend(id, report.usage);
      rec.startedAt = report.startedAt;
      rec.finishedAt = report.finishedAt;
      rec.clock = 'activity';
    }
    this.state.executed.push(id);
    this.state.failed.push(id);
    if (this.failure) return false;
    this.failure = { message: `Node ${this.node(id).name} failed: ${error.message}`, nodeId: id };
    return true;
  }

  /** The node was stopped because the case ended while it ran. */
  cancel(id: string): void {
    const rec = this.record(id);
    rec.status = 'cancelled';
    rec.error = { message: 'Stopped: the case ended while the node ran', kind: 'cancelled' };
  }

  /**
   * The node is done running (whatever its outcome) at `at`. Returns the
   * nodes that become ready to run: after a completion, the children whose
   * parents are all settled and that have a taken incoming edge (the others
   * are skipped, and so on downstream).
   */
  settle(id: string, at: string): string[] {
    const rec = this.record(id);
    // On the clock it started by: an 'upstream' start is ahead of the workflow clock.
    rec.finishedAt ??= rec.startedAt !== undefined && at < rec.startedAt ? rec.startedAt : at;
    this.state.running = this.state.running.filter((r) => r !== id);
    return rec.status === 'completed' ? this.release(id) : [];
  }

  /** Ends the case: its terminal status, with the error and `not_executed` nodes set in the progress. */
  finish(ending: RunEnding): TerminalStatus {
    const stuck = this.remaining();
    let status: TerminalStatus;
    if (this.failure) status = 'FAILED';
    else if (ending.deadlinePassed) status = 'TIMED_OUT';
    else if (ending.cancelled) status = 'CANCELLED';
    else if (stuck.length > 0) {
      status = 'FAILED';
      this.failure = { message: `Nodes ${stuck.join(', ')} can never run: the graph has a cycle` };
    } else status = 'COMPLETED';
    for (const id of stuck) this.record(id).status = 'not_executed';
    this.state.status = status;
    if (status === 'FAILED') this.state.error = this.failure;
    else if (status === 'TIMED_OUT')
      this.state.error = { message: `The case did not finish within its deadline of ${ending.deadlineMs} ms` };
    else if (status === 'CANCELLED') this.state.error = { message: 'The case was cancelled' };
    return status;
  }

  /** Ends the case before any node ran (its start refused): FAILED with `message`, every node not_executed. */
  refuse(message: string): TerminalStatus {
    this.failure = { message };
    // The failure decides the status: neither the deadline nor a cancel is read.
    return this.finish({ deadlinePassed: false, cancelled: false, deadlineMs: 0 });
  }

  /**
   * When `id` (running) is the case's last activity node: nothing else runs, waits or is still to run but output
   * nodes that only it leaves undecided and that lead nowhere, and no node has failed. Then the node and the case's
   * end may run as one step; the tail is what that step needs (its graph and outputs cut to the node, its output
   * nodes and the nodes those read: their parents and the nodes their variable_mappings name). Only output nodes
   * follow it, so the end's inline work is their inputs copied: bounded by the outputs they read, whatever the graph
   * (an inline route or condition after it keeps the node on the usual path).
   * The rules of eligibility are fixed by the revision-12 histories: changing them changes those runs' commands.
   */
  lastNodeTail(id: string): LastNodeTail | undefined {
    if (this.failure || this.state.running.length !== 1 || this.state.running[0] !== id) return undefined;
    const outgoing = this.index.outgoing.get(id) ?? [];
    const tail = new Set(outgoing.map((e) => e.to_node_id));
    const settled = (other: string) => ['completed', 'skipped'].includes(this.record(other).status);
    const parents = new Set<string>();
    for (const out of tail) {
      const node = this.node(out);
      const incoming = this.index.incoming.get(out) ?? [];
      if (
        nodeKinds.of(node)?.handlerClass !== 'output' ||
        this.decided.has(out) ||
        this.input.reused?.[out] !== undefined ||
        (this.index.outgoing.get(out) ?? []).length > 0 ||
        !incoming.every((e) => e.from_node_id === id || settled(e.from_node_id))
      )
        return undefined;
      for (const e of incoming) parents.add(e.from_node_id);
      // An output may map a variable from any upstream node (say, echo a case input): keep it and its outputs.
      for (const mapping of Object.values(node.variable_mappings ?? {})) parents.add(mapping.from_node_id);
    }
    for (const other of Object.keys(this.input.graph.nodes))
      if (other !== id && !tail.has(other) && !settled(other)) return undefined;
    const kept = new Set([id, ...tail, ...parents]);
    const pick = <T>(entries: [string, T][]) => Object.fromEntries(entries.filter(([key]) => kept.has(key)));
    const { graph } = this.input;
    const edges = Object.entries(graph.edges).filter(([, e]) => tail.has(e.to_node_id));
    return {
      graph: { ...graph, nodes: pick(Object.entries(graph.nodes)), edges: Object.fromEntries(edges) },
      snapshot: { state: this.state, outputs: pick([...this.outputs]), decided: [...this.decided] },
    };
  }

  /** The live progress (the workflow's query), with the nodes still to run. */
  progress(): CaseProgress {
    return { ...this.state, remaining: this.remaining() };
  }

  private record(id: string): NodeRecord {
    return this.state.nodes[id] as NodeRecord;
  }

  /** Not yet started and not skipped, in graph order (nodes on a cycle, which has none, last). */
  private remaining(): string[] {
    const pending = (id: string) => this.state.nodes[id]?.status === 'pending';
    const ordered = new Set(this.index.order);
    return [
      ...this.index.order.filter(pending),
      ...Object.keys(this.input.graph.nodes).filter((id) => !ordered.has(id) && pending(id)),
    ];
  }

  private skip(id: string): string[] {
    this.record(id).status = 'skipped';
    return this.release(id);
  }

  /** The children of a completed or skipped node that are now decided: those to run are returned, the others skipped. */
  private release(id: string): string[] {
    const ready: string[] = [];
    for (const edge of this.index.outgoing.get(id) ?? []) {
      const target = edge.to_node_id;
      if (this.decided.has(target)) continue;
      const incoming = this.index.incoming.get(target) ?? [];
      const settled = incoming.every((e) => ['completed', 'skipped'].includes(this.record(e.from_node_id).status));
      if (!settled) continue;
      this.decided.add(target);
      const taken = incoming.some((e) => {
        const from = this.input.graph.nodes[e.from_node_id];
        return (
          this.record(e.from_node_id).status === 'completed' &&
          from !== undefined &&
          edgeTaken(e, from, this.outputs.get(e.from_node_id) ?? {})
        );
      });
      if (taken) ready.push(...this.handOut(target));
      else ready.push(...this.skip(target));
    }
    return ready;
  }
}
