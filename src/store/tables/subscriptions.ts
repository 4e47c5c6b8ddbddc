/**
 * Event subscriptions: a workspace's receivers of case events (case.completed,
 * case.failed, …), each with its own Standard Webhooks signing secret kept
 * encrypted with the secret box. Their deliveries are callback deliveries
 * (callback_deliveries.subscription_id names the subscription).
 */
export interface EventSubscriptionTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  url: string;
  /** JSON array of event types, e.g. ["case.failed"]. */
  event_types: string;
  description: string | null;
  /** 0/1: a disabled subscription receives no new events. */
  enabled: number;
  /** `whsec_…`, secret-box ciphertext bound to the subscription id. */
  secret_ciphertext: string;
  /** The secret before the last rotation, still signed with until previous_expires_at. */
  previous_secret_ciphertext: string | null;
  previous_expires_at: string | null;
  /** The key that created it or last set its URL: it delivers only while that key may read cases there. */
  created_by_key_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface SubscriptionTables {
  event_subscriptions: EventSubscriptionTable;
}
