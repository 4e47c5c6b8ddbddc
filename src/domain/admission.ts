/** Records of case admission under concurrency caps (docs/concurrency.md), shared by the store and the cases area. */

/** A case waiting in its organization's queue (status QUEUED), with its workflow's own cap. */
export interface QueuedCase {
  id: string;
  workflowId: string;
  queuedAt: string;
  /** The workflow's maxConcurrentCases; null: only the organization's cap applies. */
  workflowCap: number | null;
}

/** An organization's own cap as the operator set it. */
export interface ConcurrencyLimit {
  organizationId: string;
  /** null: no cap for this organization, whatever the configured default. */
  maxConcurrentCases: number | null;
  updatedAt: string;
}
