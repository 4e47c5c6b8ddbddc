import { DomainError } from '../errors.js';
import type { WorkflowVersionSnapshot } from '../domain/graph.js';
import {
  toSnapshot,
  type VersionPin,
  type WorkflowRecord,
  type WorkflowRepo,
  type WorkflowVersionRecord,
} from '../store/workflow-repo.js';

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
 * The version a new case runs. `referenceEntityId` wins over `workflowId`
 * (which may itself be an id or an entity id). A pin (`versionId` wins over
 * `versionNumber`) runs whatever its status; without one the latest active
 * version runs, and a workflow without any gives 409. Unknown workflows and
 * versions, and workflows of another organization, give 404 (nothing leaks).
 */
export async function resolveRunVersion(
  repo: WorkflowRepo,
  organizationId: string,
  ref: WorkflowRef,
  pin: VersionPin,
): Promise<WorkflowVersionSnapshot> {
  let workflow: WorkflowRecord | undefined;
  if (ref.referenceEntityId !== undefined) workflow = await repo.findWorkflowByEntityId(ref.referenceEntityId);
  else if (ref.workflowId !== undefined) workflow = await repo.findWorkflowByIdOrEntityId(ref.workflowId);
  else throw DomainError.badRequest('Send workflowId or referenceEntityId');
  const label = ref.referenceEntityId ?? ref.workflowId;
  if (!workflow || workflow.organizationId !== organizationId)
    throw DomainError.notFound(`Workflow ${label} does not exist`);
  if (isPinned(pin)) return toSnapshot(workflow, await pinnedVersion(repo, workflow.id, pin));
  const active = await repo.latestActiveVersion(workflow.id);
  if (!active) {
    throw DomainError.conflict(`Workflow ${workflow.id} has no active version; activate one or pin a version`, {
      reason: 'NO_ACTIVE_VERSION',
      workflowId: workflow.id,
    });
  }
  return toSnapshot(workflow, active);
}
