import type { VariableType } from '../domain/vocabulary.js';

/**
 * How a workflow file's names of catalog entries meet the ids in a graph. The CLI answers through the API in the
 * target workspace, so a file moves between workspaces and instances; a test answers from a table.
 */
export type Lookup<T> = { found: T } | { missing: string };

export interface CodeRef {
  codeId: string;
  versionId: string;
}

/** One variable of a catalog code node (the contract's Field object; the catalog has no `array_files`). */
export interface CodeField {
  id: string;
  variableName: string;
  displayName: string;
  allowedTypes: Array<{ type: Exclude<VariableType, 'array_files'> }>;
  description?: string;
  isOptional: boolean;
  isRemovable: boolean;
}

/** A code node as a workflow file declares it: the body apply registers, and the fingerprint of that body. */
export interface CodeDeclaration {
  body: {
    name: string;
    description?: string;
    sourceCode: string;
    inputs: Record<string, CodeField>;
    outputs: Record<string, CodeField>;
  };
  sha256: string;
}
export interface ActionRef {
  connectionId: string;
  actionVersionId: string;
}

/** Names → ids, for compile. `missing` says what is missing, in words. */
export interface CatalogIds {
  /**
   * The version of the code node `node` declares: the one the workflow runs when its fingerprint is the same, else
   * a new one (registered or updated). Called only for a file with no other problem, so nothing is registered for
   * a file that is not applied.
   */
  code(node: string, declaration: CodeDeclaration): Promise<Lookup<CodeRef>>;
  action(connection: string, action: string): Promise<Lookup<ActionRef>>;
  /** A workflow of the target workspace by its exact name: its id. */
  workflow(name: string): Promise<Lookup<string>>;
}

/** Ids → names, for decompile; undefined where the id is not known (the node is then written the graph's way). */
export interface CatalogNames {
  action(ref: ActionRef): Promise<{ connection: string; action: string } | undefined>;
  workflow(id: string): Promise<string | undefined>;
}
