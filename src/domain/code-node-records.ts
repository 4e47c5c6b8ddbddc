import type { CatalogField } from './catalog-field.js';

/** What one version of a code node holds; every version is a full snapshot. */
export interface CodeNodeContent {
  name: string;
  description: string | null;
  icon: string | null;
  /** Python module defining main(inputs) -> dict. */
  sourceCode: string;
  categories: string[];
  /** Keyed by variableName. */
  inputs: Record<string, CatalogField>;
  /** Keyed by variableName. */
  outputs: Record<string, CatalogField>;
  tags: string[];
  options: Array<Record<string, unknown>>;
  nonEditableFields: string[];
}

export interface CodeNodeVersion extends CodeNodeContent {
  /** The code node's id (stable across versions). */
  id: string;
  versionId: string;
  versionNumber: number;
  organizationId: string;
  /** When the code node was first registered. */
  createdAt: string;
  /** When this version was cut. */
  versionCreatedAt: string;
  /** User behind the key that cut this version. */
  createdBy: string;
}
