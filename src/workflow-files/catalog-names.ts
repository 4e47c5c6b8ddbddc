/**
 * How a workflow file's names of catalog entries meet the ids in a graph. The CLI answers through the API in the
 * target workspace, so a file moves between workspaces and instances; a test answers from a table.
 */
export type Lookup<T> = { found: T } | { missing: string };

export interface CodeRef {
  codeId: string;
  versionId: string;
}
export interface ActionRef {
  connectionId: string;
  actionVersionId: string;
}

/** Names → ids, for compile. `missing` says what is missing, in words. */
export interface CatalogIds {
  code(name: string, version: number | undefined): Promise<Lookup<CodeRef>>;
  action(connection: string, action: string): Promise<Lookup<ActionRef>>;
  /** A workflow of the target workspace by its exact name: its id. */
  workflow(name: string): Promise<Lookup<string>>;
}

/** Ids → names, for decompile; undefined where the id is not known (the node is then written the graph's way). */
export interface CatalogNames {
  code(ref: CodeRef): Promise<{ name: string; version: number; latest: boolean } | undefined>;
  action(ref: ActionRef): Promise<{ connection: string; action: string } | undefined>;
  workflow(id: string): Promise<string | undefined>;
}
