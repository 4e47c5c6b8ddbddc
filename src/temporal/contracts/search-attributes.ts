import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

/**
 * Our custom search attributes: what an operator filters runs by in the
 * Temporal UI ("failed cases of workspace X today"). Registered by the
 * embedded dev server at start; on a cluster with
 * `temporal operator search-attribute create` (docs/running.md).
 * Deterministic and side-effect free, so workflow code may import it.
 */
export const searchAttributes = {
  organizationId: defineSearchAttributeKey('CaseflowOrganizationId', SearchAttributeType.KEYWORD),
  workspaceId: defineSearchAttributeKey('CaseflowWorkspaceId', SearchAttributeType.KEYWORD),
  workflowId: defineSearchAttributeKey('CaseflowWorkflowId', SearchAttributeType.KEYWORD),
  caseStatus: defineSearchAttributeKey('CaseflowCaseStatus', SearchAttributeType.KEYWORD),
  source: defineSearchAttributeKey('CaseflowSource', SearchAttributeType.KEYWORD),
  /** A rerun's original case id (the caseflow case, not the Temporal run). */
  rerunOf: defineSearchAttributeKey('CaseflowRerunOf', SearchAttributeType.KEYWORD),
} as const;

/** `Name=Type` pairs as `temporal server start-dev --search-attribute` and the operator command take them. */
export function searchAttributeRegistrations(): string[] {
  return Object.values(searchAttributes).map((key) => `${key.name}=Keyword`);
}

/** What a run is tagged with; a field left out is not set. */
export interface RunTags {
  organizationId: string;
  /** Absent on a run over several workspaces (a bulk rerun of an organization). */
  workspaceId?: string;
  /** caseflow's workflow id (not Temporal's). */
  workflowId?: string;
  caseStatus?: string;
  source?: string;
  rerunOf?: string;
}

/** The start option tagging a run, or nothing when the namespace lacks our attributes (temporal.searchAttributes off). */
export function runTags(enabled: boolean, tags: RunTags): { typedSearchAttributes?: SearchAttributePair[] } {
  if (!enabled) return {};
  const pairs: SearchAttributePair[] = [];
  for (const name of Object.keys(searchAttributes) as Array<keyof typeof searchAttributes>) {
    const value = tags[name];
    if (value !== undefined) pairs.push({ key: searchAttributes[name], value });
  }
  return { typedSearchAttributes: pairs };
}
