import { randomUUID } from 'node:crypto';
import { assertWorkspaceGrant, listScope, type ListRequest } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { Grant } from '../domain/grants.js';
import { ShortLivedCache } from '../caching/short-lived-cache.js';
import type { CallbackDeliveryInput } from '../temporal/contracts/callback-delivery.js';
import type { CaseError, TerminalStatus } from '../domain/cases.js';
import { caseEndEvent, type CaseEventBody, type EventType } from '../domain/events.js';
import { DomainError } from '../errors.js';
import type { KeyAuthentication } from '../auth/key-authentication.js';
import type { Logger } from '../logging/logger.js';
import type { Outbound } from '../net/outbound.js';
import { checkTenantUrl } from '../net/url-check.js';
import type { CallbackAttempt, CallbackDelivery } from '../domain/callback-records.js';
import type { CallbackRepo, NewDelivery } from '../store/callback-repo.js';
import { decodeCursor } from '../store/paging.js';
import type { Page } from '../domain/page.js';
import type { EventSubscription } from '../domain/events.js';
import type { SubscriptionChanges, SubscriptionRepo } from '../store/subscription-repo.js';
import type { TenancyRepo } from '../store/tenancy-repo.js';
import type { CallbackDeliveryGateway } from '../temporal/gateways/callback-deliveries.js';
import type { RotatedSecret, SubscriptionSecrets } from './subscription-secrets.js';

export interface SubscriptionServiceDeps {
  repo: SubscriptionRepo;
  callbacks: CallbackRepo;
  tenancy: TenancyRepo;
  secrets: SubscriptionSecrets;
  /** Delivery workflows in Temporal: each event delivery is one, as a callback's retries are. */
  deliveries: CallbackDeliveryGateway;
  outbound: Outbound;
  /** How long a workspace's enabled subscriptions are reused by the case ends of this process (0: off). */
  subscriberCacheMs: number;
  /** Subscriptions one workspace may hold (events.maxSubscriptionsPerWorkspace). */
  maxPerWorkspace: number;
  /** Whether the key a subscription acts for may still read the cases it is told of. */
  authentication: Pick<KeyAuthentication, 'refusal'>;
  logger: Logger;
}

export interface NewSubscriptionRequest {
  workspaceId: string;
  url: string;
  eventTypes: EventType[];
  description?: string;
  enabled?: boolean;
}

export interface SubscriptionUpdate {
  url?: string;
  eventTypes?: EventType[];
  description?: string | null;
  enabled?: boolean;
}

/** A subscription as created: the signing secret is shown this once. */
export interface CreatedSubscription {
  subscription: EventSubscription;
  secret: string;
}

/** A page of a subscription's deliveries with each one's attempts. */
export interface SubscriptionDeliveries {
  page: Page<CallbackDelivery>;
  attempts: Map<string, CallbackAttempt[]>;
}

/** A case's end as recorded, with what its event carries. */
export interface EndedCase {
  caseId: string;
  workspaceId: string;
  workflowId: string;
  status: TerminalStatus;
  finishedAt: string;
  results: Record<string, unknown>;
  error?: CaseError;
}

/** The Temporal workflow id of an event delivery. */
const deliveryWorkflowId = (deliveryId: string) => `event-${deliveryId}`;

/**
 * Event subscriptions of a workspace (create, list, read, change, delete,
 * rotate the secret, deliveries and redelivery) and, on the worker, the
 * deliveries a case's end owes them: written in the transaction that records
 * the end (an outbox), then each handed to a callback delivery workflow.
 */
export class SubscriptionService {
  private readonly subscribers: ShortLivedCache<string, EventSubscription[]>;
  /** Subscriptions whose refusal this process has logged (at most the subscriptions there are). */
  private readonly refusedLogged = new Set<string>();

  constructor(private readonly deps: SubscriptionServiceDeps) {
    this.subscribers = new ShortLivedCache({ ttlMs: deps.subscriberCacheMs, maxEntries: 10_000 });
  }

  async create(auth: AuthContext, request: NewSubscriptionRequest): Promise<CreatedSubscription> {
    const workspace = await this.deps.tenancy.findWorkspace(request.workspaceId);
    // Another organization's workspace does not exist for this caller.
    if (!workspace || workspace.organizationId !== auth.organizationId)
      throw DomainError.notFound(`Workspace ${request.workspaceId} does not exist`);
    assertWorkspaceGrant(auth, workspace, 'case:full');
    await checkTenantUrl(this.deps.outbound, request.url, 'body.url');
    const id = randomUUID();
    const { secret, ciphertext } = this.deps.secrets.create(id);
    const subscription = await this.deps.repo.create(
      {
        id,
        organizationId: workspace.organizationId,
        workspaceId: workspace.id,
        url: request.url,
        eventTypes: unique(request.eventTypes),
        description: request.description ?? null,
        enabled: request.enabled ?? true,
        createdByKeyId: auth.keyId,
        secretCiphertext: ciphertext,
      },
      this.deps.maxPerWorkspace,
    );
    if (subscription === 'full')
      throw DomainError.limitReached(
        `Workspace ${workspace.id} holds ${this.deps.maxPerWorkspace} event subscriptions, the most it may (events.maxSubscriptionsPerWorkspace): delete one first`,
        { setting: 'events.maxSubscriptionsPerWorkspace', max: this.deps.maxPerWorkspace },
      );
    this.subscribers.delete(workspace.id);
    return { subscription, secret };
  }

  async list(auth: AuthContext, request: ListRequest): Promise<Page<EventSubscription>> {
    const scope = listScope(auth, 'case:read', request);
    return scope ? this.deps.repo.list(scope) : { items: [], nextCursor: null };
  }

  get(auth: AuthContext, id: string): Promise<EventSubscription> {
    return this.load(auth, id, 'case:read');
  }

  async update(auth: AuthContext, id: string, update: SubscriptionUpdate): Promise<EventSubscription> {
    const current = await this.load(auth, id, 'case:full');
    if (update.url !== undefined) await checkTenantUrl(this.deps.outbound, update.url, 'body.url');
    const changes: SubscriptionChanges = {
      // Who points it somewhere is whom it acts for from then on.
      ...(update.url !== undefined ? { url: update.url, createdByKeyId: auth.keyId } : {}),
      ...(update.eventTypes !== undefined ? { eventTypes: unique(update.eventTypes) } : {}),
      ...(update.description !== undefined ? { description: update.description } : {}),
      ...(update.enabled !== undefined ? { enabled: update.enabled } : {}),
    };
    const updated = await this.deps.repo.update(id, changes);
    this.subscribers.delete(current.workspaceId);
    if (!updated) throw DomainError.notFound(`Subscription ${id} does not exist`);
    return updated;
  }

  /** Deletes it; deliveries still retrying then fail (nothing signs for it any more), the log stays. */
  async delete(auth: AuthContext, id: string): Promise<void> {
    const current = await this.load(auth, id, 'case:full');
    await this.deps.repo.delete(id);
    this.subscribers.delete(current.workspaceId);
  }

  async rotateSecret(auth: AuthContext, id: string): Promise<RotatedSecret> {
    await this.load(auth, id, 'case:full');
    const rotated = await this.deps.secrets.rotate(id);
    if (!rotated) throw DomainError.notFound(`Subscription ${id} does not exist`);
    return rotated;
  }

  async deliveries(
    auth: AuthContext,
    id: string,
    request: { cursor?: string; limit: number },
  ): Promise<SubscriptionDeliveries> {
    await this.load(auth, id, 'case:read');
    const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
    if (request.cursor !== undefined && !after)
      throw DomainError.invalidFields([{ field: 'query.cursor', message: 'not a cursor this list gave out' }]);
    const page = await this.deps.callbacks.listSubscriptionDeliveries(id, after, request.limit);
    return { page, attempts: await this.deps.callbacks.listAttempts(page.items.map((d) => d.id)) };
  }

  /**
   * Sends one of the subscription's deliveries again as a new delivery (new
   * `webhook-id`, fresh retry schedule) to the subscription's current URL.
   * `admit` (the caller's rate limit) runs before anything is written.
   */
  async redeliver(
    auth: AuthContext,
    id: string,
    deliveryId: string,
    admit: () => Promise<void>,
  ): Promise<{ deliveryId: string; workflowId: string }> {
    const subscription = await this.load(auth, id, 'case:full');
    const original = await this.deps.callbacks.findDelivery(deliveryId);
    if (original?.subscriptionId !== id)
      throw DomainError.notFound(`Delivery ${deliveryId} of subscription ${id} does not exist`);
    await admit();
    const newId = randomUUID();
    const delivery: NewDelivery = {
      id: newId,
      caseId: original.caseId,
      workspaceId: subscription.workspaceId,
      url: subscription.url,
      body: original.body,
      workflowId: deliveryWorkflowId(newId),
      subscriptionId: id,
    };
    await this.deps.callbacks.createDelivery(delivery);
    await this.start(delivery, subscription.organizationId);
    return { deliveryId: delivery.id, workflowId: delivery.workflowId };
  }

  /**
   * The workspace's subscribers to the event a case ending in `status` raises,
   * read before the end's transaction. The list is reused for a short while,
   * so a busy workspace without subscriptions costs no query per case.
   */
  async subscribersOf(workspaceId: string, status: TerminalStatus): Promise<EventSubscription[]> {
    const type = caseEndEvent[status];
    return (await this.enabledIn(workspaceId)).filter((s) => s.eventTypes.includes(type));
  }

  /** The deliveries a case's end owes `subscribers`, for the transaction that records the end (no I/O). */
  deliveriesTo(subscribers: EventSubscription[], ended: EndedCase): NewDelivery[] {
    const body: CaseEventBody = {
      type: caseEndEvent[ended.status],
      timestamp: ended.finishedAt,
      data: {
        caseId: ended.caseId,
        workspaceId: ended.workspaceId,
        workflowId: ended.workflowId,
        status: ended.status,
        results: ended.results,
        ...(ended.error ? { error: ended.error } : {}),
      },
    };
    const text = JSON.stringify(body);
    return subscribers.map((s) => {
      // Derived, so a retried case end finds the same rows and the same workflows.
      const id = `${ended.caseId}-${s.id}`;
      return {
        id,
        caseId: ended.caseId,
        workspaceId: ended.workspaceId,
        url: s.url,
        body: text,
        workflowId: deliveryWorkflowId(id),
        subscriptionId: s.id,
      };
    });
  }

  /** Starts the delivery workflows of the deliveries just recorded. */
  async dispatch(deliveries: NewDelivery[], organizationId: string): Promise<void> {
    for (const delivery of deliveries) await this.start(delivery, organizationId);
  }

  /**
   * Starts the workflows of a case's event deliveries that never made an
   * attempt: the case end was recorded but the process died (or Temporal
   * refused) before they started. Runs when a case end is retried.
   */
  async dispatchUnstarted(caseId: string): Promise<void> {
    const unstarted = await this.deps.callbacks.unstartedEventDeliveries(caseId);
    const first = unstarted[0];
    if (!first) return;
    const workspace = await this.deps.tenancy.findWorkspace(first.workspaceId);
    if (!workspace) return;
    await this.dispatch(
      unstarted.map((d) => ({ ...d, subscriptionId: d.subscriptionId ?? undefined })),
      workspace.organizationId,
    );
  }

  private async start(delivery: NewDelivery, organizationId: string): Promise<void> {
    const body = JSON.parse(delivery.body) as CaseEventBody;
    const input: CallbackDeliveryInput = {
      deliveryId: delivery.id,
      caseId: delivery.caseId,
      workspaceId: delivery.workspaceId,
      callbackUrl: delivery.url,
      body,
      ...(delivery.subscriptionId ? { subscriptionId: delivery.subscriptionId } : {}),
    };
    // 'conflict': its workflow runs already (a retried case end).
    await this.deps.deliveries.start(delivery.workflowId, input, {
      organizationId,
      workspaceId: delivery.workspaceId,
      caseStatus: body.data.status,
    });
  }

  /**
   * The workspace's enabled subscriptions whose key may still read its cases: a subscription sends every
   * case's results to a URL its key chose, so it stops with that key (revoked, expired, its user gone), as a
   * hook's deliveries and a schedule's firings do; within subscriberCacheMs of the change.
   */
  private async enabledIn(workspaceId: string): Promise<EventSubscription[]> {
    const hit = this.subscribers.get(workspaceId);
    if (hit) return hit;
    const read = this.subscribers.beginRead();
    const enabled = await this.deps.repo.listEnabled(workspaceId);
    const refusals = await Promise.all(enabled.map((subscription) => this.refusal(subscription)));
    const acting: EventSubscription[] = [];
    enabled.forEach((subscription, i) => {
      const refusal = refusals[i];
      if (!refusal) acting.push(subscription);
      // Once per subscription and process: the read repeats every subscriberCacheMs while the workspace has ends.
      else if (!this.refusedLogged.has(subscription.id)) {
        this.refusedLogged.add(subscription.id);
        this.deps.logger.warn({ subscriptionId: subscription.id, workspaceId }, refusal);
      }
    });
    this.subscribers.set(workspaceId, acting, read);
    return acting;
  }

  /** Why the subscription's key may no longer read the cases it would be told of; null when it may (or it names none). */
  private refusal(subscription: EventSubscription): Promise<string | null> {
    const { createdByKeyId, id, workspaceId, organizationId } = subscription;
    if (createdByKeyId === null) return Promise.resolve(null);
    return this.deps.authentication.refusal(
      createdByKeyId,
      `subscription ${id}`,
      { id: workspaceId, organizationId },
      'case:read',
    );
  }

  /** The subscription after checking the grant in its workspace; another organization's is a 404. */
  private async load(auth: AuthContext, id: string, grant: Grant): Promise<EventSubscription> {
    const subscription = await this.deps.repo.find(id);
    if (!subscription || subscription.organizationId !== auth.organizationId)
      throw DomainError.notFound(`Subscription ${id} does not exist`);
    assertWorkspaceGrant(auth, { id: subscription.workspaceId, organizationId: subscription.organizationId }, grant);
    return subscription;
  }
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}
