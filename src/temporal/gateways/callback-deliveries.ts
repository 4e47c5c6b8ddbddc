import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { CallbackDeliveryInput } from '../contracts/callback-delivery.js';
import type { TemporalHandle } from '../connection.js';
import { callbackDeliveryContract } from '../contracts/callback-delivery.js';
import { startWorkflow } from '../contracts/start.js';
import { runTags, type RunTags } from '../contracts/search-attributes.js';
import { boundedCall } from '../engine-health.js';

/**
 * Each call is bounded: one that never answers (a frontend that accepts the connection and hangs) would otherwise
 * hold the pass that made it (the reconciler's, the delivery sweep's) and every later one.
 */
const CALL_TIMEOUT_MS = 15_000;
/** A namespace's retention is read again after this: an operator's change is seen within it. */
const RETENTION_READ_EVERY_MS = 10 * 60_000;

/** What Temporal knows of a delivery's workflow: running, closed, or none (never started, or deleted since). */
export type DeliveryWorkflowState = 'running' | 'closed' | 'absent';

/** What the callbacks area needs of delivery workflows in Temporal (CallbackService takes this, tests a fake). */
export interface CallbackDeliveryGateway {
  /**
   * Starts a delivery's retry workflow under `workflowId`; 'conflict' when one with that id ran or is running.
   * Rejects when Temporal does not answer in time: the start may still have been accepted.
   */
  start(workflowId: string, input: CallbackDeliveryInput, tags: RunTags): Promise<'started' | 'conflict'>;
  state(workflowId: string): Promise<DeliveryWorkflowState>;
  /**
   * How long the namespace keeps a closed workflow: after that a start under its id is no longer refused. Undefined
   * when the namespace states none (nothing is then taken as forgotten).
   */
  retentionMs(): Promise<number | undefined>;
}

/** Callback deliveries on the process's Temporal client. */
export class TemporalCallbackDeliveries implements CallbackDeliveryGateway {
  private retention: { ms: number | undefined; readAt: number } | undefined;

  constructor(
    private readonly temporal: Pick<TemporalHandle, 'client' | 'namespace' | 'taskQueue' | 'searchAttributes'>,
    /** Tests shorten it. */
    private readonly callTimeoutMs = CALL_TIMEOUT_MS,
  ) {}

  async start(workflowId: string, input: CallbackDeliveryInput, tags: RunTags): Promise<'started' | 'conflict'> {
    const { client, taskQueue, searchAttributes } = this.temporal;
    try {
      await this.bounded('starting a delivery workflow', () =>
        startWorkflow(client.workflow, callbackDeliveryContract, {
          taskQueue,
          workflowId,
          args: [input],
          // A delivery's workflow runs once: a second start (a retried case end) is a conflict even after it closed.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          ...runTags(searchAttributes, tags),
        }),
      );
      return 'started';
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'conflict';
      throw err;
    }
  }

  async state(workflowId: string): Promise<DeliveryWorkflowState> {
    const { client } = this.temporal;
    try {
      const { status } = await this.bounded('describing a delivery workflow', () =>
        client.workflow.getHandle(workflowId).describe(),
      );
      return status.name === 'RUNNING' ? 'running' : 'closed';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'absent';
      throw err;
    }
  }

  async retentionMs(): Promise<number | undefined> {
    if (this.retention && Date.now() - this.retention.readAt < RETENTION_READ_EVERY_MS) return this.retention.ms;
    const { client, namespace } = this.temporal;
    const { config } = await this.bounded("reading the namespace's retention", () =>
      client.workflowService.describeNamespace({ namespace }),
    );
    const ms = namespaceRetentionMs(config?.workflowExecutionRetentionTtl);
    this.retention = { ms, readAt: Date.now() };
    return ms;
  }

  private bounded<T>(what: string, call: () => Promise<T>): Promise<T> {
    return boundedCall(this.temporal.client, this.callTimeoutMs, what, call);
  }
}

/**
 * A namespace's retention (a protobuf Duration) in ms; undefined when none is stated (or it is nonsense): unknown,
 * not "forgets at once", which would fail every overdue delivery.
 */
export function namespaceRetentionMs(
  ttl: { seconds?: { toString(): string } | number | null; nanos?: number | null } | null | undefined,
): number | undefined {
  // Seconds come as a Long (no valueOf) or a number: both print as decimal digits.
  const ms = Number(String(ttl?.seconds ?? 0)) * 1000 + Math.floor((ttl?.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}
