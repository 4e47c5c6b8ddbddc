import type { AuthContext } from '../domain/auth-context.js';
import type { Config } from '../config/config.js';
import type { WorkflowService } from '../definitions/workflow-service.js';
import { isTerminal, type RerunVersion } from '../domain/cases.js';
import type { RunnableVersion } from '../domain/graph.js';
import { DomainError } from '../errors.js';
import type { CaseRecord } from '../domain/case-records.js';
import type { CaseRepo } from '../store/case-repo.js';
import { validateCaseInputs } from './case-inputs.js';
import type { CaseService } from './case-service.js';
import { assertCaseInputsWithinLimit } from './payload-limits.js';
import type { RerunBody as RerunRequest } from './schemas.js';

export interface RerunServiceDeps {
  config: Config;
  repo: CaseRepo;
  workflows: WorkflowService;
  cases: CaseService;
}

/**
 * Reruns of ended cases: a new case (its own id, row and Temporal run) linked
 * to the original, started from the start or from the node that failed, on
 * the original version or the latest active one. A rerun from the failed
 * node takes the original's completed nodes as done with their recorded
 * outputs (CaseService.reusePlan); only the rest runs.
 */
export class RerunService {
  constructor(private readonly deps: RerunServiceDeps) {}

  /**
   * Checks that `original` can be rerun as asked and starts the rerun (as
   * `auth`, which needs Case: Full on the case). `id`: the new case's id when
   * the caller fixes it (a bulk rerun's, so a step done twice starts once).
   */
  async rerun(
    auth: AuthContext,
    caseId: string,
    request: RerunRequest,
    id?: string,
  ): Promise<{ record: CaseRecord; temporalUiUrl: string | null }> {
    const original = await this.deps.cases.load(auth, caseId, 'case:full');
    const existing = id === undefined ? undefined : await this.deps.repo.find(id);
    if (existing?.rerunOf === original.id) return this.startExisting(auth, existing, original);
    const prepared = await this.prepare(original, request);
    const rerun = await this.deps.repo.create({
      ...(id ? { id } : {}),
      organizationId: original.organizationId,
      workspaceId: original.workspaceId,
      workflowId: original.workflowId,
      entityId: prepared.version.entityId,
      workflowVersionId: prepared.version.versionId,
      workflowVersionNumber: prepared.version.versionNumber,
      source: original.source,
      initialInput: prepared.inputs,
      createdByKeyId: auth.keyId,
      createdByUserId: auth.userId,
      ...(original.title === null ? {} : { title: original.title }),
      ...(original.description === null ? {} : { description: original.description }),
      ...(original.refUserId === null ? {} : { refUserId: original.refUserId }),
      rerunOf: original.id,
      rerunFrom: request.from,
    });
    return this.execute(auth, rerun.id, original);
  }

  /** Starts the rerun with the original's callback URL and deadline (its inputs are its initialInput). */
  private execute(auth: AuthContext, rerunId: string, original: CaseRecord) {
    return this.deps.cases.execute(auth, rerunId, {
      ...(original.callbackUrl === null ? {} : { callbackUrl: original.callbackUrl }),
      ...(original.deadlineMs === null ? {} : { timeoutMs: original.deadlineMs }),
    });
  }

  /** A rerun created by an earlier try of the same step: started now if it never was, else as it stands. */
  private async startExisting(
    auth: AuthContext,
    rerun: CaseRecord,
    original: CaseRecord,
  ): Promise<{ record: CaseRecord; temporalUiUrl: string | null }> {
    if (rerun.status === 'PENDING') return this.execute(auth, rerun.id, original);
    return { record: rerun, temporalUiUrl: null };
  }

  /** Refuses what cannot be rerun honestly; the version to run and the rerun's inputs. */
  private async prepare(
    original: CaseRecord,
    request: RerunRequest,
  ): Promise<{ version: RunnableVersion; inputs: Record<string, unknown> }> {
    if (!isTerminal(original.status))
      throw DomainError.conflict(
        `Case ${original.id} has not ended (status ${original.status}): only an ended case can be rerun`,
        { status: original.status },
      );
    if (request.from === 'failed' && original.status !== 'FAILED')
      throw DomainError.conflict(
        `Case ${original.id} did not fail (status ${original.status}): rerun it from the start instead`,
        { status: original.status },
      );
    const version = await this.version(original, request.version);
    const supplied = { ...(original.inputs ?? original.initialInput), ...request.inputs };
    const checked = validateCaseInputs(version.graph, supplied, { partial: false, prefix: 'body.inputs' });
    if (checked.problems.length > 0) throw DomainError.invalidFields(checked.problems);
    assertCaseInputsWithinLimit(checked.inputs, this.deps.config.cases.maxInputBytes, 'body.inputs');
    if (request.from === 'failed') {
      const { unreusable } = await this.deps.cases.reusePlan(original, version.graph);
      if (unreusable.length > 0)
        throw DomainError.conflict(
          `Version ${version.versionNumber} cannot reuse what case ${original.id} completed: ${unreusable
            .map((n) => `${n.name} (${n.problem})`)
            .join(', ')}; rerun from the start or on the original version`,
          { nodes: unreusable },
        );
    }
    return { version, inputs: checked.inputs };
  }

  private async version(original: CaseRecord, which: RerunVersion): Promise<RunnableVersion> {
    const { workflows } = this.deps;
    if (which === 'latest')
      return workflows.resolveForRun(original.organizationId, { workflowId: original.workflowId }, {});
    const version = await workflows.findRunnableVersion(original.organizationId, original.workflowVersionId);
    if (!version) throw new Error(`workflow version ${original.workflowVersionId} of case ${original.id} is missing`);
    return version;
  }
}
