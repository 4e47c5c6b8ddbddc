/** An inbound webhook trigger: who may call it (its signature scheme and secret) and what case it starts. */
export interface HookTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  workflow_id: string;
  name: string;
  /** standard-webhooks | github | stripe | hmac-sha256 */
  scheme: string;
  /** The header carrying the hmac-sha256 scheme's signature; null for the other schemes. */
  signature_header: string | null;
  /** JSON: workflow input name → { body: JSON pointer } | { header: name } | { value }; null: the body is the inputs. */
  mapping: string | null;
  /** async | sync */
  mode: string;
  sync_timeout_ms: number;
  tolerance_seconds: number;
  rate_limit_per_minute: number;
  /** 0 | 1 */
  enabled: number;
  /** SecretBox ciphertext bound to the hook id. */
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
  created_by_key_id: string;
  created_by_user_id: string;
  created_at: string;
  updated_at: string;
}

/**
 * One Idempotency-Key of one organization in one scope (`api`, or `hook:<id>` for deliveries): sha256 of the
 * key and of the request, and the first answer once it is known. A row without an answer is a claim, held by
 * the request that wrote claim_token until lease_until.
 */
export interface IdempotencyKeyTable {
  organization_id: string;
  scope: string;
  key_hash: string;
  request_hash: string;
  claim_token: string;
  response_status: number | null;
  /** JSON text of the first answer's body. */
  response_body: string | null;
  lease_until: string;
  created_at: string;
}

export interface HookTables {
  hooks: HookTable;
  idempotency_keys: IdempotencyKeyTable;
}
