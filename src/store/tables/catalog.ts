/**
 * Integration catalog tables. Each versioned entity (integration, action,
 * credential template) is a head row (what never changes, plus the number of
 * its latest version) and immutable version rows, so whatever pinned a
 * version id (a connection, a workflow) keeps exactly that version.
 * organization_id null marks what the service itself published.
 */
export interface ProviderTable {
  id: string;
  organization_id: string | null;
  name: string;
  created_by: string | null;
  created_at: string;
}

export interface IntegrationTable {
  id: string;
  organization_id: string | null;
  provider_id: string;
  latest_version_number: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface IntegrationVersionTable {
  id: string;
  integration_id: string;
  version_number: number;
  name: string;
  description: string | null;
  icon: string;
  /** JSON array. */
  category: string;
  required_plan: string;
  status: string;
  is_new: number;
  is_popular: number;
  is_beta: number;
  created_by: string | null;
  created_at: string;
}

export interface IntegrationActionTable {
  id: string;
  integration_id: string;
  /** Place in the integration, in the order authored (0-based). */
  position: number;
  latest_version_number: number;
  created_at: string;
  updated_at: string;
}

export interface IntegrationActionVersionTable {
  id: string;
  action_id: string;
  version_number: number;
  name: string;
  endpoint: string;
  description: string | null;
  /** JSON maps keyed by variableName. */
  inputs: string;
  outputs: string;
  code: string | null;
  created_by: string | null;
  created_at: string;
}

export interface CredentialTemplateTable {
  id: string;
  integration_id: string;
  /** Unique per integration: the contract's one credential per authType. */
  auth_type: string;
  latest_version_number: number;
  created_at: string;
  updated_at: string;
}

export interface CredentialTemplateVersionTable {
  id: string;
  credential_id: string;
  version_number: number;
  name: string;
  description: string | null;
  icon: string;
  status: string;
  /** JSON map keyed by variableName, defaults filled in. */
  inputs: string;
  created_by: string | null;
  created_at: string;
}

/** One Idempotency-Key of integration creation: sha256 of the key, of the request, and the first result. */
export interface IntegrationIdempotencyTable {
  organization_id: string;
  key_hash: string;
  request_hash: string;
  /** JSON of the IntegrationCreation the first request produced. */
  result: string;
  created_at: string;
}

export interface CatalogTables {
  providers: ProviderTable;
  integrations: IntegrationTable;
  integration_versions: IntegrationVersionTable;
  integration_actions: IntegrationActionTable;
  integration_action_versions: IntegrationActionVersionTable;
  credential_templates: CredentialTemplateTable;
  credential_template_versions: CredentialTemplateVersionTable;
  integration_idempotency: IntegrationIdempotencyTable;
}
