import type { CaseError, TerminalStatus } from './cases.js';

/**
 * The event types a subscription may ask for. Other areas append theirs
 * (task and schedule events) here: the API's enum and the OpenAPI document
 * follow this list.
 */
export const eventTypes = ['case.completed', 'case.failed', 'case.timed_out', 'case.cancelled'] as const;
export type EventType = (typeof eventTypes)[number];

/** The event a case's end raises. */
export const caseEndEvent: Record<TerminalStatus, EventType> = {
  COMPLETED: 'case.completed',
  FAILED: 'case.failed',
  TIMED_OUT: 'case.timed_out',
  CANCELLED: 'case.cancelled',
};

/** The body POSTed to a subscription (the Standard Webhooks `{ type, timestamp, data }` shape). */
export interface CaseEventBody {
  type: EventType;
  /** When the case ended (ISO 8601). */
  timestamp: string;
  data: {
    caseId: string;
    workspaceId: string;
    /** caseflow's workflow id (not Temporal's). */
    workflowId: string;
    status: TerminalStatus;
    results: Record<string, unknown>;
    error?: CaseError;
  };
}

/** An event subscription of a workspace (its secrets stay in the store). */
export interface EventSubscription {
  id: string;
  organizationId: string;
  workspaceId: string;
  url: string;
  eventTypes: string[];
  description: string | null;
  enabled: boolean;
  /** The key it acts for (created it or last set its URL); null for subscriptions made before it was kept. */
  createdByKeyId: string | null;
  createdAt: string;
  updatedAt: string;
}
