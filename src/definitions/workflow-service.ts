import { assertWorkspaceGrant, listScope, requireWorkspaceGrant, type ListRequest } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { Grant } from '../domain/grants.js';
import type { SourceGates } from '../code/source-gates.js';
import { integrationActionProblems, type GraphReferences } from '../connections/workflow-references.js';
import { defaultGraph } from '../domain/default-graph.js';
import type {
  RunnableVersion,
  WorkflowEdge,
  WorkflowGraph,
  WorkflowNode,
  WorkflowVersionSnapshot,
} from '../domain/graph.js';
import { validateGraph, type GraphProblem } from '../domain/graph-validation.js';
import { DomainError } from '../errors.js';
import type { Page } from '../domain/page.js';
import type { TenancyRepo, Workspace } from '../store/tenancy-repo.js';
import type { WorkflowRepo } from '../store/workflow-repo.js';
import type {
  VersionPin,
  VersionStatus,
  WorkflowListItem,
  WorkflowRecord,
  WorkflowVersionRecord,
  WorkflowWithVersion,
} from '../domain/workflow-records.js';
import type { CallWorkflowProcess } from '../domain/node-kinds/call-workflow.js';
import { callProblems, type Callee, type SavedWorkflow } from './call-graph.js';
import { isPinned, pinnedVersion, RunVersions, type WorkflowRef } from './run-version.js';

export interface NewWorkflow {
  name: string;
  description?: string;
  activeStatus: VersionStatus;
  nodes?: Record<string, WorkflowNode>;
  edges?: Record<string, WorkflowEdge>;
  orgUnitIds?: string[];
  maxConcurrentCases?: number | null;
}

/** Any subset; the rest carries over from the latest version. */
export interface WorkflowChanges {
  name?: string;
  description?: string;
  activeStatus?: VersionStatus;
  nodes?: Record<string, WorkflowNode>;
  edges?: Record<string, WorkflowEdge>;
  maxConcurrentCases?: number | null;
}

export type VersionSummary = Omit<WorkflowVersionRecord, 'graph'>;

/** One workflow as its details page shows it: the version asked for and a page of the others. */
export interface WorkflowDetails {
  workflow: WorkflowRecord;
  version: WorkflowVersionRecord;
  latest: WorkflowVersionRecord;
  active: WorkflowVersionRecord | undefined;
  versions: VersionSummary[];
  nextVersionsCursor: number | null;
}

/** A page of the workflow list: filters on top of what the key may read. */
export interface WorkflowListRequest extends ListRequest {
  status?: VersionStatus;
  name?: string;
}

/** Which version unpinned runs use after an activate or deactivate. */
export interface WorkflowStatus {
  workflowId: string;
  active: WorkflowVersionRecord | undefined;
}

/** Graph problems as the one 400: the problems under metadata.violations and as field errors. */
function invalidGraph(problems: GraphProblem[]): DomainError {
  const first = problems[0];
  return DomainError.invalidFields(
    problems.map((p) => ({ field: `body.${p.path}`, message: p.message })),
    {
      message: `Invalid workflow graph${first ? `: ${first.path}: ${first.message}` : ''}`,
      metadata: { violations: problems },
    },
  );
}

function checkedGraph(graph: WorkflowGraph): WorkflowGraph {
  const problems = validateGraph(graph);
  if (problems.length > 0) throw invalidGraph(problems);
  return graph;
}

/**
 * Workflows and their versions: who may read and change them, the graph's
 * validation and source gates before anything is stored, which version runs.
 */
export class WorkflowService {
  private readonly runVersions: RunVersions;

  constructor(
    private readonly repo: WorkflowRepo,
    private readonly tenancy: TenancyRepo,
    private readonly gates: SourceGates,
    /** What a graph may name outside itself: catalog actions and the workspace's connections. */
    private readonly references: GraphReferences,
    /** How deep call_workflow nodes may nest cases (cases.maxCallDepth). */
    private readonly maxCallDepth: number,
    /** Problems with the people a graph names (human_task assignees). */
    private readonly assigneeProblems: (auth: AuthContext, graph: WorkflowGraph) => Promise<GraphProblem[]>,
  ) {
    this.runVersions = new RunVersions(repo);
  }

  /**
   * What a graph names outside itself must be usable by the workflow's workspace: integration
   * actions and connections, and the workflows its call_workflow nodes call (no recursion, no
   * deeper nesting than cases.maxCallDepth); the people its human_task nodes name must be members.
   */
  private async checkReferences(auth: AuthContext, workspaceId: string, saved: SavedWorkflow): Promise<void> {
    const problems = [
      ...(await integrationActionProblems(this.references, auth, workspaceId, saved.graph)),
      ...(await callProblems(saved, (process) => this.callee(auth, workspaceId, process), this.maxCallDepth)),
      ...(await this.assigneeProblems(auth, saved.graph)),
    ];
    if (problems.length > 0) throw invalidGraph(problems);
  }

  /**
   * The version a call_workflow node would run, or why none: the callee must be a workflow of the
   * same workspace, which the saving key (Workflow: Full there) reads. Another workspace's or
   * organization's workflow reads as unknown, so a save discloses nothing.
   */
  private async callee(auth: AuthContext, workspaceId: string, process: CallWorkflowProcess): Promise<Callee | string> {
    const unknown = `workflow ${process.workflow_id} does not exist in this workspace`;
    try {
      const version = await this.resolveForRun(
        auth.organizationId,
        { workflowId: process.workflow_id },
        { versionNumber: process.version_number },
      );
      if (version.workspaceId !== workspaceId) return unknown;
      return { workflowId: version.workflowId, versionId: version.versionId, name: version.name, graph: version.graph };
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.errorCode === 'NOT_FOUND' && process.version_number === undefined) return unknown;
      if (err.errorCode === 'NOT_FOUND' || err.errorCode === 'CONFLICT') return err.message;
      throw err;
    }
  }

  /** The workspace a workflow is created in, checked for Workflow: Full before the body is read. */
  authorizeCreate(auth: AuthContext, workspaceId: string): Promise<Workspace> {
    return requireWorkspaceGrant(this.tenancy, auth, workspaceId, 'workflow:full');
  }

  async create(auth: AuthContext, workspace: Workspace, input: NewWorkflow): Promise<WorkflowWithVersion> {
    const graph =
      input.nodes === undefined && input.edges === undefined
        ? defaultGraph()
        : checkedGraph({ nodes: input.nodes ?? {}, edges: input.edges ?? {} });
    await this.gates.gateInlineSources(auth, graph);
    await this.checkReferences(auth, workspace.id, { name: input.name, graph });
    return this.repo.create({
      organizationId: auth.organizationId,
      workspaceId: workspace.id,
      name: input.name,
      description: input.description,
      createdBy: auth.userId,
      graph,
      activeStatus: input.activeStatus,
      orgUnitIds: [...new Set(input.orgUnitIds ?? [])],
      maxConcurrentCases: input.maxConcurrentCases,
    });
  }

  /** Workflows newest first in the workspaces the key reads with Workflow: Read (403 without it anywhere). */
  async list(auth: AuthContext, request: WorkflowListRequest): Promise<Page<WorkflowListItem>> {
    const scope = listScope(auth, 'workflow:read', request);
    if (!scope) return { items: [], nextCursor: null };
    return this.repo.list({ ...scope, status: request.status, nameContains: request.name });
  }

  /** The workflow by id or entity id (404), then the grant in its workspace (403, also for another organization's). */
  async load(auth: AuthContext, workflowId: string, grant: Grant): Promise<WorkflowRecord> {
    const workflow = await this.repo.findWorkflowByIdOrEntityId(workflowId);
    if (!workflow) throw DomainError.notFound(`Workflow ${workflowId} does not exist`);
    assertWorkspaceGrant(auth, { id: workflow.workspaceId, organizationId: workflow.organizationId }, grant);
    return workflow;
  }

  async details(
    auth: AuthContext,
    workflowId: string,
    pin: VersionPin,
    page: { limit: number; cursor?: number },
  ): Promise<WorkflowDetails> {
    const workflow = await this.load(auth, workflowId, 'workflow:read');
    const latest = await this.repo.latestVersion(workflow.id);
    if (!latest) throw DomainError.notFound(`Workflow ${workflow.id} has no versions`);
    const version = isPinned(pin) ? await pinnedVersion(this.repo, workflow.id, pin) : latest;
    const active = await this.repo.latestActiveVersion(workflow.id);
    const versions = await this.repo.listVersionSummaries(workflow.id, {
      limit: page.limit,
      beforeNumber: page.cursor,
    });
    const last = versions[versions.length - 1];
    const nextVersionsCursor =
      versions.length === page.limit && last && last.versionNumber > 1 ? last.versionNumber : null;
    return { workflow, version, latest, active, versions, nextVersionsCursor };
  }

  /** Cuts a new version of a workflow already loaded with Workflow: Full (the body schema requires one change at least). */
  async update(auth: AuthContext, workflow: WorkflowRecord, changes: WorkflowChanges): Promise<WorkflowWithVersion> {
    let graph: WorkflowGraph | undefined;
    if (changes.nodes !== undefined || changes.edges !== undefined) {
      const latest = await this.repo.latestVersion(workflow.id);
      graph = checkedGraph({
        nodes: changes.nodes ?? latest?.graph.nodes ?? {},
        edges: changes.edges ?? latest?.graph.edges ?? {},
      });
      await this.gates.gateInlineSources(auth, graph);
      await this.checkReferences(auth, workflow.workspaceId, {
        workflowId: workflow.id,
        name: changes.name ?? workflow.name,
        graph,
      });
    }
    const updated = await this.repo.update(workflow.id, {
      name: changes.name,
      description: changes.description,
      graph,
      activeStatus: changes.activeStatus,
      maxConcurrentCases: changes.maxConcurrentCases,
      updatedBy: auth.userId,
    });
    if (!updated) throw DomainError.notFound(`Workflow ${workflow.id} does not exist`);
    return updated;
  }

  /** Makes the pinned version (by default the latest) the active one; the others become inactive. */
  async activate(workflow: WorkflowRecord, pin: VersionPin): Promise<WorkflowStatus> {
    const version = isPinned(pin)
      ? await pinnedVersion(this.repo, workflow.id, pin)
      : await this.repo.latestVersion(workflow.id);
    if (!version) throw DomainError.notFound(`Workflow ${workflow.id} has no versions`);
    await this.repo.setVersionStatus(workflow.id, version.id, 'active');
    return this.status(workflow.id);
  }

  /** Deactivates the pinned version, or without a pin every version. */
  async deactivate(workflow: WorkflowRecord, pin: VersionPin): Promise<WorkflowStatus> {
    if (isPinned(pin))
      await this.repo.setVersionStatus(workflow.id, (await pinnedVersion(this.repo, workflow.id, pin)).id, 'inactive');
    else await this.repo.deactivateAllVersions(workflow.id);
    return this.status(workflow.id);
  }

  /** The version a run of this workflow would use, for a caller with Workflow: Read. */
  async runnable(
    auth: AuthContext,
    workflowId: string,
    pin: VersionPin,
  ): Promise<{ workflow: WorkflowRecord; snapshot: WorkflowVersionSnapshot }> {
    const workflow = await this.load(auth, workflowId, 'workflow:read');
    return { workflow, snapshot: await this.resolveForRun(auth.organizationId, { workflowId: workflow.id }, pin) };
  }

  resolveForRun(organizationId: string, ref: WorkflowRef, pin: VersionPin): Promise<WorkflowVersionSnapshot> {
    return this.runVersions.resolve(organizationId, ref, pin);
  }

  /** The version a case of the organization runs, by its id; undefined when there is none. */
  findRunnableVersion(organizationId: string, versionId: string): Promise<RunnableVersion | undefined> {
    return this.runVersions.find(organizationId, versionId);
  }

  private async status(workflowId: string): Promise<WorkflowStatus> {
    return { workflowId, active: await this.repo.latestActiveVersion(workflowId) };
  }
}
