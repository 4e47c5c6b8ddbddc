/** Callback deliveries and their attempts, as the store keeps them and the services return them. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface CallbackDelivery {
  id: string;
  caseId: string;
  workspaceId: string;
  url: string;
  /** The exact JSON text POSTed and signed. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  workflowId: string;
  /** The event subscription it delivers to; null for the case's own callbackUrl. */
  subscriptionId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CallbackAttempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}
