import { DomainError } from '../errors.js';
import type { RunnableVersion, WorkflowVersionSnapshot } from '../domain/graph.js';
import { toSnapshot, type WorkflowForRun, type WorkflowRepo } from '../store/workflow-repo.js';
import type { VersionPin, WorkflowVersionRecord } from '../domain/workflow-records.js';
import { RunnableVersionCache } from './version-cache.js';

/** How a case names its workflow: by id (or entity id), or by entity id alone. */
export interface WorkflowRef {
  workflowId?: string;
  referenceEntityId?: string;
}

export function isPinned(pin: VersionPin): boolean {
  return pin.versionId !== undefined || pin.versionNumber !== undefined;
}

/** One version of a workflow by pin; 404 when the workflow has no such version. */
export async function pinnedVersion(
  repo: WorkflowRepo,
  workflowId: string,
  pin: VersionPin,
): Promise<WorkflowVersionRecord> {
  const version = await repo.findWorkflowVersion(workflowId, pin);
  if (!version)
    throw DomainError.notFound(
      `Workflow ${workflowId} has no version ${pin.versionId ?? `number ${pin.versionNumber}`}`,
    );
  return version;
}

/**
 * Which version a case runs, and the version a case runs by its id. Which version is active is
 * read from the store on every resolution (any process sharing it may change it); the versions'
 * immutable content comes from the cache when this process has read it before.
 */
export class RunVersions {
  private readonly cache = new RunnableVersionCache();

  constructor(private readonly repo: WorkflowRepo) {}

  /**
   * The version a new case runs. `referenceEntityId` wins over `workflowId`
   * (which may itself be an id or an entity id). A pin (`versionId` wins over
   * `versionNumber`) runs whatever its status; without one the latest active
   * version runs, and a workflow without any gives 409. Unknown workflows and
   * versions, and workflows of another organization, give 404 (nothing leaks).
   */
  async resolve(organizationId: string, ref: WorkflowRef, pin: VersionPin): Promise<WorkflowVersionSnapshot> {
    let found: WorkflowForRun | undefined;
    if (ref.referenceEntityId !== undefined)
      found = await this.repo.findWorkflowForRun({ entityId: ref.referenceEntityId });
    else if (ref.workflowId !== undefined)
      found =
        (await this.repo.findWorkflowForRun({ id: ref.workflowId })) ??
        (await this.repo.findWorkflowForRun({ entityId: ref.workflowId }));
    else throw DomainError.badRequest('Send workflowId or referenceEntityId');
    const label = ref.referenceEntityId ?? ref.workflowId;
    if (!found || found.workflow.organizationId !== organizationId)
      throw DomainError.notFound(`Workflow ${label} does not exist`);
    const { workflow, activeVersionId } = found;
    // A pin runs whatever the version's status, which the snapshot reports as read.
    if (isPinned(pin)) return toSnapshot(workflow, await pinnedVersion(this.repo, workflow.id, pin));
    const active = activeVersionId === null ? undefined : await this.find(organizationId, activeVersionId);
    if (!active) {
      throw DomainError.conflict(`Workflow ${workflow.id} has no active version; activate one or pin a version`, {
        reason: 'NO_ACTIVE_VERSION',
        workflowId: workflow.id,
      });
    }
    return { ...active, activeStatus: 'active' };
  }

  /** A version of the organization by id (a case's own); undefined when there is none. */
  async find(organizationId: string, versionId: string): Promise<RunnableVersion | undefined> {
    const cached = this.cache.get(organizationId, versionId);
    if (cached) return cached;
    const found = await this.repo.findRunnableVersion(versionId);
    if (!found || found.version.organizationId !== organizationId) return undefined;
    this.cache.remember(found.version, found.graphChars);
    return found.version;
  }
}
