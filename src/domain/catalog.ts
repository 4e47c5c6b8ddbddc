import type { CatalogField } from './catalog-field.js';

/** The contract's enums for the catalog. */
export const requiredPlans = ['core', 'pro', 'scale'] as const;
export const integrationStatuses = ['active', 'inactive', 'soon', 'deprecated'] as const;
export const authTypes = ['jwt', 'oauth', 'api_key', 'access_token', 'custom_header_auth', 'other', 'no_auth'] as const;
export const credentialStatuses = ['active', 'inactive'] as const;
export const credentialFieldTypes = [
  'str',
  'int',
  'float',
  'bool',
  'date',
  'list',
  'dict',
  'set',
  'object',
  'array',
  'file',
  'array_files',
] as const;

export type RequiredPlan = (typeof requiredPlans)[number];
export type IntegrationStatus = (typeof integrationStatuses)[number];
export type AuthType = (typeof authTypes)[number];
export type CredentialStatus = (typeof credentialStatuses)[number];
export type CredentialFieldType = (typeof credentialFieldTypes)[number];

export interface Provider {
  id: string;
  /** null: published by the service itself (operator command). */
  organizationId: string | null;
  name: string;
  createdAt: string;
}

/** What one integration version holds (its own metadata; actions and credentials version separately). */
export interface IntegrationContent {
  name: string;
  description: string | null;
  icon: string;
  category: string[];
  requiredPlan: RequiredPlan;
  status: IntegrationStatus;
  isNew: boolean;
  isPopular: boolean;
  /** Accepted and kept, never echoed (the contract does not name the response field). */
  isBeta: boolean;
}

export interface ActionContent {
  name: string;
  /** External endpoint; the smoke test of a connection calls it. */
  endpoint: string;
  description: string | null;
  inputs: Record<string, CatalogField>;
  outputs: Record<string, CatalogField>;
  /** Python in script form: reads input_data / credential_value, assigns result[...]. */
  code: string | null;
}

/** One input of a credential template, with every default filled in. */
export interface CredentialField {
  displayName: string;
  variableName: string;
  type: CredentialFieldType;
  order: number;
  placeholder?: string;
  isSecret: boolean;
  isNullable: boolean;
  isEditable: boolean;
  isVisible: boolean;
  default?: unknown;
}

export interface CredentialContent {
  name: string;
  description: string | null;
  icon: string;
  /** Fixed for the credential's life: an integration holds one credential per authType. */
  authType: AuthType;
  status: CredentialStatus;
  inputs: Record<string, CredentialField>;
}

interface Versioned {
  /** Stable across versions. */
  id: string;
  versionId: string;
  /** 1 at creation, +1 per update. */
  versionNumber: number;
  /** When the entity was created. */
  createdAt: string;
  /** When this version was cut. */
  versionCreatedAt: string;
}

export interface IntegrationVersion extends IntegrationContent, Versioned {
  /** null: published by the service, visible to every organization. */
  organizationId: string | null;
  providerId: string;
}

export interface ActionVersion extends ActionContent, Versioned {
  integrationId: string;
  /** The owning integration's organization (null: published). */
  organizationId: string | null;
}

export interface CredentialVersion extends CredentialContent, Versioned {
  integrationId: string;
  organizationId: string | null;
}

/** An integration with the latest version of each of its actions and credential templates. */
export interface IntegrationDetail {
  integration: IntegrationVersion;
  actions: ActionVersion[];
  credentials: CredentialVersion[];
}

/** What creating an integration produced; also what an idempotent retry replays. */
export interface IntegrationCreation {
  integration: IntegrationVersion;
  createdActions: Array<{ actionId: string; actionVersionId: string; name: string }>;
  createdCredential: { credentialId: string; credentialVersionId: string; name: string } | null;
}

export interface IntegrationDraft {
  providerId: string;
  content: IntegrationContent;
  actions: ActionContent[];
  credential: CredentialContent | null;
}
