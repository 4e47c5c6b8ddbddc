import { Counter, Registry } from 'prom-client';
import type { Logger } from '../logging/logger.js';

/** What an operator can act on, one counter label each. */
export type OAuthEvent =
  | 'authorization_started'
  | 'authorization_succeeded'
  | 'authorization_failed'
  | 'authorization_expired'
  | 'token_refreshed'
  | 'refresh_failed'
  | 'needs_reauthorization';

/** Events that call for an operator's (or the workspace's) attention are logged as warnings. */
const warnings = new Set<OAuthEvent>(['authorization_failed', 'refresh_failed', 'needs_reauthorization']);

export interface OAuthEventFields {
  connectionId?: string;
  credentialId?: string;
  attemptId?: string;
  organizationId?: string;
  workspaceId?: string;
  /** Why, in the provider's or our words; never a token or secret. */
  reason?: string;
}

/**
 * OAuth connection events as log lines (`event: oauth.<name>`) and the
 * counter `caseflow_oauth_events_total{event}` on the service's registry.
 */
export class OAuthEvents {
  private readonly counter: Counter<'event'>;

  constructor(
    private readonly logger: Logger,
    registry: Registry = new Registry(),
  ) {
    this.counter = new Counter({
      name: 'caseflow_oauth_events_total',
      help: 'OAuth connection events: authorizations started/succeeded/failed/expired, refreshes, failures, re-authorization needed',
      labelNames: ['event'] as const,
      registers: [registry],
    });
  }

  emit(event: OAuthEvent, fields: OAuthEventFields): void {
    this.counter.inc({ event });
    const line = { event: `oauth.${event}`, ...fields };
    if (warnings.has(event)) this.logger.warn(line, `OAuth ${event.replace(/_/g, ' ')}`);
    else this.logger.info(line, `OAuth ${event.replace(/_/g, ' ')}`);
  }
}
