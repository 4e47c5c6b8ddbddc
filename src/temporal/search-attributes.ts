import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Our custom search attributes: what an operator filters runs by in the
 * Temporal UI ("failed cases of workspace X today"). Registered by the
 * embedded dev server at start; on a cluster with
 * `temporal operator search-attribute create` (docs/operations.md).
 * Deterministic and side-effect free, so workflow code may import it.
 */
export const searchAttributes = {
  organizationId: defineSearchAttributeKey('CaseflowOrganizationId', SearchAttributeType.KEYWORD),
  workspaceId: defineSearchAttributeKey('CaseflowWorkspaceId', SearchAttributeType.KEYWORD),
  workflowId: defineSearchAttributeKey('CaseflowWorkflowId', SearchAttributeType.KEYWORD),
  caseStatus: defineSearchAttributeKey('CaseflowCaseStatus', SearchAttributeType.KEYWORD),
  source: defineSearchAttributeKey('CaseflowSource', SearchAttributeType.KEYWORD),
} as const;

/** `Name=Type` pairs as `temporal server start-dev --search-attribute` and the operator command take them. */
export function searchAttributeRegistrations(): string[] {
  return Object.values(searchAttributes).map((key) => `${key.name}=Keyword`);
}
