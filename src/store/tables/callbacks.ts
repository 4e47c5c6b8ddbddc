/**
 * Case completion callbacks: one delivery per POST the service owes a
 * receiver (the case run's own, and one per redelivery), every HTTP attempt
 * of it, and the per-workspace signing secret (encrypted with the secret box).
 */
export interface CallbackDeliveryTable {
  /** Also the `webhook-id` header: stable across the delivery's attempts. */
  id: string;
  case_id: string;
  workspace_id: string;
  url: string;
  /** The exact JSON text POSTed (and signed) on every attempt. */
  body: string;
  /** 'pending' | 'delivered' | 'failed' */
  status: string;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt is due while pending; null once final. */
  next_attempt_at: string | null;
  /** Temporal workflow id that delivers it. */
  workflow_id: string;
  /** The event subscription it delivers to (signed with its secret); null for the case's own callbackUrl. */
  subscription_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface CallbackAttemptTable {
  delivery_id: string;
  /** 1-based. */
  attempt: number;
  started_at: string;
  duration_ms: number;
  /** HTTP status, null when no response came (refused, timed out). */
  response_status: number | null;
  /** The first 1 KB of the response body. */
  response_body: string | null;
  /** Why the attempt failed, null for a 2xx. */
  error: string | null;
}

export interface WebhookSecretTable {
  workspace_id: string;
  /** `whsec_…`, secret-box ciphertext bound to the workspace id. */
  secret_ciphertext: string;
  /** The secret before the last rotation, still signed with until previous_expires_at. */
  previous_secret_ciphertext: string | null;
  previous_expires_at: string | null;
  created_at: string;
  rotated_at: string | null;
}

export interface CallbackTables {
  callback_deliveries: CallbackDeliveryTable;
  callback_attempts: CallbackAttemptTable;
  webhook_secrets: WebhookSecretTable;
}
