import type { ZodType, z } from 'zod';
import { assertWorkspaceGrant, canUseWorkspace, requireWorkspaceGrant } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { Grant } from '../domain/grants.js';
import { DomainError } from '../errors.js';
import { DiscoveryRepo, type ProcessRecord, type ProcessSnapshotRecord } from '../store/discovery-repo.js';
import type { TenancyRepo } from '../store/tenancy-repo.js';
import { importBpmn, type DroppedElement } from './bpmn-import.js';
import {
  processContentSchema,
  processUpdateSchema,
  type ProcessContent,
  type ReadStep,
  type Step,
  type TaggedItem,
} from '../domain/discovery-process.js';
import { processProblems, type ProcessProblem } from './process-rules.js';

/** The contract's Discovered process, plus which snapshot it is (null: the current state). */
export interface DiscoveredProcess extends Omit<ProcessContent, 'steps'> {
  steps: ReadStep[];
  id: string;
  organizationId: string;
  workspaceId: string;
  stepCount: number;
  branchCount: number;
  createdAt: string;
  updatedAt: string;
  processVersionId: string | null;
  versionNumber: number | null;
}

export interface ProcessSnapshot {
  processId: string;
  processVersionId: string;
  versionNumber: number;
  createdAt: string;
}

export interface ImportedProcess {
  process: DiscoveredProcess;
  bpmnProcessId: string;
  dropped: DroppedElement[];
}

/** Concurrent updates of one process: how often an update re-reads its base before giving up with 409. */
const UPDATE_ATTEMPTS = 5;
/** How far up the hierarchy a parent chain is followed when looking for a cycle. */
const MAX_HIERARCHY_DEPTH = 100;

function invalid(problems: ProcessProblem[]): DomainError {
  const first = problems[0];
  return DomainError.invalidFields(
    problems.map((problem) => ({ field: `body.${problem.path}`, message: problem.message })),
    {
      message: `Invalid process${first ? `: ${first.path}: ${first.message}` : ''}`,
      metadata: { violations: problems },
    },
  );
}

/** Shapes and limits first (zod), then the cross-field rules. */
function validated<S extends ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw invalid(
      parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
    );
  return parsed.data;
}

function consistent(content: ProcessContent): ProcessContent {
  const problems = processProblems(content);
  if (problems.length > 0) throw invalid(problems);
  return content;
}

/**
 * Process-level integrations first, then every step's in step order; one
 * entry per id, and one per name (case and spacing aside), first one kept.
 */
function mergedIntegrations(content: ProcessContent): TaggedItem[] {
  const byOrder = [...content.steps].sort((a, b) => (a.stepOrder ?? Infinity) - (b.stepOrder ?? Infinity));
  const merged: TaggedItem[] = [];
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const item of [...content.processIntegrations, ...byOrder.flatMap((step: Step) => step.integrations)]) {
    const name = item.text.trim().replace(/\s+/g, ' ').toLowerCase();
    if (ids.has(item.id) || names.has(name)) continue;
    ids.add(item.id);
    names.add(name);
    merged.push(item);
  }
  return merged;
}

/**
 * The contract's branchOrder is a number on every step. A main-line step stored without one (any
 * document written before, snapshots included, and writes that omit it) reads as 0. Mapped here, on
 * the one path every read takes, rather than by a migration: documents and immutable snapshots are
 * JSON text on SQLite and Postgres alike, and rewriting them would touch every row for a value the
 * read can supply, and would change snapshots that are meant to stay exact copies.
 */
function readStep(step: Step): ReadStep {
  return { ...step, branchOrder: step.branchOrder ?? 0 };
}

function toDiscovered(
  process: ProcessRecord,
  content: ProcessContent,
  snapshot?: ProcessSnapshotRecord,
): DiscoveredProcess {
  return {
    ...content,
    steps: content.steps.map(readStep),
    id: process.id,
    organizationId: process.organizationId,
    workspaceId: process.workspaceId,
    stepCount: content.steps.length,
    branchCount: new Set(content.steps.flatMap((step) => (step.branchId === null ? [] : [step.branchId]))).size,
    processIntegrations: mergedIntegrations(content),
    createdAt: process.createdAt,
    updatedAt: snapshot ? snapshot.processUpdatedAt : process.updatedAt,
    processVersionId: snapshot?.id ?? null,
    versionNumber: snapshot?.versionNumber ?? null,
  };
}

/**
 * Discovered processes: authoring (create, BPMN import, update, snapshot)
 * under Discovery: Full in the process's workspace, and the read under
 * Discovery: Read. Permission is checked before a body is looked at.
 */
export class DiscoveryService {
  private readonly repo: DiscoveryRepo;
  private readonly tenancy: TenancyRepo;

  constructor(deps: { repo: DiscoveryRepo; tenancy: TenancyRepo }) {
    this.repo = deps.repo;
    this.tenancy = deps.tenancy;
  }

  /** A workspace the key may author processes in (404 unknown, 403 no access). */
  async authoringWorkspace(auth: AuthContext, workspaceId: string): Promise<string> {
    return (await requireWorkspaceGrant(this.tenancy, auth, workspaceId, 'discovery:full')).id;
  }

  /** Validates and stores a new process in a workspace from authoringWorkspace. */
  async create(auth: AuthContext, workspaceId: string, body: unknown): Promise<DiscoveredProcess> {
    return this.store(auth, workspaceId, validated(processContentSchema, body));
  }

  /** Maps a BPMN 2.0 document and stores it exactly as create would (same validation). */
  async importBpmn(
    auth: AuthContext,
    workspaceId: string,
    xml: string,
    options: { bpmnProcessId?: string },
  ): Promise<ImportedProcess> {
    const imported = importBpmn(xml, options);
    const process = await this.store(auth, workspaceId, validated(processContentSchema, imported.content));
    return { process, bpmnProcessId: imported.bpmnProcessId, dropped: imported.dropped };
  }

  /** Any subset of the top-level fields; the merged document is validated whole. */
  async update(auth: AuthContext, processId: string, body: unknown): Promise<DiscoveredProcess> {
    let base = await this.load(auth, processId, 'discovery:full');
    const update = validated(processUpdateSchema, body);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      if (attempt > 0) base = await this.load(auth, processId, 'discovery:full');
      const content = consistent({ ...base.content, ...definedFields(update) });
      if (update.parentProcessId) await this.checkParent(auth, content.parentProcessId, processId);
      const updated = await this.repo.replaceContent(processId, base.revision, content);
      if (updated) return toDiscovered(updated, updated.content);
    }
    throw DomainError.conflict('The process is being updated concurrently; retry');
  }

  /** Saves the current state as a snapshot a later read takes by its processVersionId. */
  async snapshot(auth: AuthContext, processId: string): Promise<ProcessSnapshot> {
    await this.load(auth, processId, 'discovery:full');
    const snapshot = await this.repo.snapshot(processId, auth.userId);
    return {
      processId,
      processVersionId: snapshot.id,
      versionNumber: snapshot.versionNumber,
      createdAt: snapshot.createdAt,
    };
  }

  /**
   * The process as the contract's read gives it: the current state, or the
   * snapshot `processVersionId` (404 when it is not one of this process's).
   * Requires Discovery: Read in the owning workspace. This is also what the
   * workflow generator calls to build a workflow from a process.
   */
  async read(auth: AuthContext, processId: string, processVersionId?: string): Promise<DiscoveredProcess> {
    const process = await this.load(auth, processId, 'discovery:read');
    if (processVersionId === undefined) return toDiscovered(process, process.content);
    const snapshot = await this.repo.findSnapshot(processVersionId);
    if (!snapshot || snapshot.processId !== process.id)
      throw DomainError.notFound(`Process ${processId} has no version ${processVersionId}`);
    return toDiscovered(process, snapshot.content, snapshot);
  }

  /** 404 for an unknown process, then 403 (another organization's, or the grant missing in its workspace). */
  private async load(auth: AuthContext, processId: string, grant: Grant): Promise<ProcessRecord> {
    const process = await this.repo.find(processId);
    if (!process) throw DomainError.notFound(`Process ${processId} does not exist`);
    assertWorkspaceGrant(auth, { id: process.workspaceId, organizationId: process.organizationId }, grant);
    return process;
  }

  private async store(auth: AuthContext, workspaceId: string, content: ProcessContent): Promise<DiscoveredProcess> {
    consistent(content);
    await this.checkParent(auth, content.parentProcessId, undefined);
    const created = await this.repo.create({
      organizationId: auth.organizationId,
      workspaceId,
      createdBy: auth.userId,
      content,
    });
    return toDiscovered(created, created.content);
  }

  /**
   * A parent is a process the key can read in its own organization, and
   * never the process itself or one of its descendants (no cycles).
   */
  private async checkParent(auth: AuthContext, parentId: string | null, childId: string | undefined): Promise<void> {
    const refuse = (message: string) => invalid([{ path: 'parentProcessId', message }]);
    let current = parentId;
    for (let depth = 0; current !== null; depth++) {
      if (current === childId) throw refuse('a process cannot be its own ancestor');
      if (depth >= MAX_HIERARCHY_DEPTH) throw refuse(`the hierarchy is deeper than ${MAX_HIERARCHY_DEPTH}`);
      const ancestor = await this.repo.find(current);
      if (
        depth === 0 &&
        (!ancestor ||
          !canUseWorkspace(
            auth,
            { id: ancestor.workspaceId, organizationId: ancestor.organizationId },
            'discovery:read',
          ))
      ) {
        throw refuse(`no process ${current} this key can read`);
      }
      current = ancestor?.content.parentProcessId ?? null;
    }
  }
}

/** The fields an update sent; undefined ones carry over from the stored document. */
function definedFields<T extends object>(update: T): Partial<T> {
  return Object.fromEntries(Object.entries(update).filter(([, value]) => value !== undefined)) as Partial<T>;
}
