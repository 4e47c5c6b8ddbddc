import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Logger } from '../logging/logger.js';
import type { TemporalHandle } from '../temporal/connection.js';
import {
  oauthAccessTokenUpdate,
  oauthAuthorizationContract,
  oauthAuthorizationWorkflowId,
  oauthCallbackSignal,
  oauthRefreshWorkflowId,
  oauthTokenRefreshContract,
  oauthTokensReplacedSignal,
  needsReauthorizationType,
  type AccessTokenAnswer,
  type OAuthAuthorizationInput,
  type OAuthCallbackSignal,
  type OAuthRefreshInput,
  type RefreshSettings,
  type TokenMeta,
} from '../temporal/contracts/oauth.js';
import type { WorkflowOf } from '../temporal/contracts/contract.js';
import { startWorkflow } from '../temporal/contracts/start.js';

/** The provider refused the refresh token (or none is held): only a person re-authorizing brings it back. */
export class OAuthNeedsReauthorization extends Error {
  override readonly name = 'OAuthNeedsReauthorization';
}

/** The token endpoint did not answer usefully this round (5xx, timeout); the refresh workflow keeps trying. */
export class OAuthRefreshUnavailable extends Error {
  override readonly name = 'OAuthRefreshUnavailable';
}

type RefreshWorkflow = WorkflowOf<typeof oauthTokenRefreshContract>;

/**
 * The Temporal side of the OAuth flow, for the API and the activities: start
 * an attempt's workflow, tell it the outcome, and reach a credential's
 * refresh workflow (started on first use if it is not running). Only ids,
 * generations and times are sent.
 */
export class OAuthTemporal {
  constructor(
    private readonly temporal: TemporalHandle,
    private readonly settings: RefreshSettings,
    private readonly logger: Logger,
  ) {}

  async startAttempt(input: OAuthAuthorizationInput): Promise<void> {
    await startWorkflow(this.temporal.client.workflow, oauthAuthorizationContract, {
      taskQueue: this.temporal.taskQueue,
      workflowId: oauthAuthorizationWorkflowId(input.attemptId),
      args: [input],
    });
  }

  /** The store holds the outcome already; a lost signal only lets the workflow's timer find it there. */
  async signalAttempt(attemptId: string, signal: OAuthCallbackSignal): Promise<void> {
    try {
      await this.temporal.client.workflow
        .getHandle(oauthAuthorizationWorkflowId(attemptId))
        .signal(oauthCallbackSignal, signal);
    } catch (err) {
      this.logger.warn({ err, attemptId }, 'OAuth attempt workflow not signalled');
    }
  }

  /** New tokens from an authorization: the refresh workflow plans from them (started if it is not running). */
  async tokensReplaced(credentialId: string, tokens: TokenMeta): Promise<void> {
    await this.temporal.client.workflow.signalWithStart<RefreshWorkflow, [TokenMeta]>(
      oauthTokenRefreshContract.workflowType,
      {
        taskQueue: this.temporal.taskQueue,
        workflowId: oauthRefreshWorkflowId(credentialId),
        args: [this.initialInput(credentialId, tokens)],
        signal: oauthTokensReplacedSignal,
        signalArgs: [tokens],
      },
    );
  }

  /**
   * Asks the credential's refresh workflow for tokens newer than `seen`
   * (the workflow refreshes once for every caller waiting). Throws
   * OAuthNeedsReauthorization or OAuthRefreshUnavailable.
   */
  async requestNewerTokens(credentialId: string, seen: TokenMeta): Promise<AccessTokenAnswer> {
    const start = new WithStartWorkflowOperation<RefreshWorkflow>(oauthTokenRefreshContract.workflowType, {
      taskQueue: this.temporal.taskQueue,
      workflowId: oauthRefreshWorkflowId(credentialId),
      args: [this.initialInput(credentialId, seen)],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    try {
      return await this.temporal.client.workflow.executeUpdateWithStart(oauthAccessTokenUpdate, {
        args: [{ seenGeneration: seen.generation }],
        startWorkflowOperation: start,
      });
    } catch (err) {
      const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type === needsReauthorizationType)
        throw new OAuthNeedsReauthorization(cause.message);
      if (cause instanceof ApplicationFailure) throw new OAuthRefreshUnavailable(cause.message);
      throw err;
    }
  }

  private initialInput(credentialId: string, tokens: TokenMeta): OAuthRefreshInput {
    return {
      credentialId,
      tokens,
      needsReauthorization: false,
      failures: 0,
      retryAt: null,
      lastError: null,
      settings: this.settings,
    };
  }
}
