import { valueTypes } from './vocabulary.js';

/**
 * The catalog's Field object as the domain sees it: one typed variable of an
 * integration action's or a code node's `inputs`/`outputs`. Its zod schema
 * (with the limits) is in src/api/schemas/catalog-fields.ts; the types live
 * here so that services and the store need not import the API layer.
 */
export const catalogFieldTypes = valueTypes;
export type CatalogFieldType = (typeof catalogFieldTypes)[number];

export interface CatalogAllowedType {
  type: CatalogFieldType;
  typeDefinition?: Record<string, CatalogField>;
  typeDefinitionEnforced?: boolean;
}

export interface CatalogField {
  id: string;
  variableName: string;
  displayName: string;
  allowedTypes: CatalogAllowedType[];
  description?: string;
  default?: unknown;
  isOptional: boolean;
  tags?: string[];
  options?: Array<Record<string, unknown>>;
  nonEditableFields?: string[];
  isRemovable: boolean;
}
