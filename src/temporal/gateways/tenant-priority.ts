import type { Priority } from '@temporalio/common';

/**
 * The Temporal priority of an organization's runs: its id is the fairness key, so with fairness on
 * (the embedded server's `temporal.devServer.fairness`, or the operator's own server) one
 * organization's backlog shares dispatch with the others instead of queueing them behind it.
 * Activities and child workflows (callback retries, call_workflow cases) inherit it.
 */
export function tenantPriority(organizationId: string): Priority {
  return { fairnessKey: organizationId };
}
