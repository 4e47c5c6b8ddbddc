/**
 * Code node tables. A code_nodes row holds what never changes per version
 * (id, organization, authorship) plus the number of the latest version; every
 * create or update writes a new immutable code_node_versions row, so a
 * workflow that pinned a version keeps running exactly that code.
 */
export interface CodeNodeTable {
  id: string;
  organization_id: string;
  /** Number of the newest version; updates bump it with a compare-and-set. */
  latest_version_number: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface CodeNodeVersionTable {
  /** The `versionId` returned by the API. */
  id: string;
  code_node_id: string;
  /** 1 for the version cut at creation, +1 per update. */
  version_number: number;
  name: string;
  description: string | null;
  icon: string | null;
  source_code: string;
  /** JSON arrays / maps (see CodeNodeVersion in code-node-repo.ts). */
  categories: string;
  inputs: string;
  outputs: string;
  tags: string;
  options: string;
  non_editable_fields: string;
  created_by: string;
  created_at: string;
}

export interface CodeNodeTables {
  code_nodes: CodeNodeTable;
  code_node_versions: CodeNodeVersionTable;
}
