import type { z } from 'zod';
import type { DeliveryOutcome, HookWithSecret } from '../../hooks/hook-service.js';
import type { Answer } from '../../idempotency/idempotent-requests.js';
import type { HookRecord } from '../../domain/hooks.js';
import type { Page } from '../../domain/page.js';
import type {
  deliveryAcceptedSchema,
  deliveryFinishedSchema,
  hookListSchema,
  hookSchema,
  hookWithSecretSchema,
} from '../schemas/hooks.js';

/** A hook as answered: never its secret (only hookWithSecretView, once). */
export function hookView(hook: HookRecord, baseUrl: string, now = Date.now()): z.infer<typeof hookSchema> {
  const previousLive =
    hook.previousSecretExpiresAt !== null && Date.parse(hook.previousSecretExpiresAt) > now
      ? hook.previousSecretExpiresAt
      : null;
  return {
    hookId: hook.id,
    workflowId: hook.workflowId,
    workspaceId: hook.workspaceId,
    name: hook.name,
    url: `${baseUrl}/hooks/${hook.id}`,
    scheme: hook.scheme,
    signatureHeader: hook.signatureHeader,
    mapping: hook.mapping,
    mode: hook.mode,
    syncTimeoutMs: hook.syncTimeoutMs,
    toleranceSeconds: hook.toleranceSeconds,
    rateLimitPerMinute: hook.rateLimitPerMinute,
    enabled: hook.enabled,
    previousSecretValidUntil: previousLive,
    createdAt: hook.createdAt,
    updatedAt: hook.updatedAt,
  };
}

export function hookWithSecretView(created: HookWithSecret, baseUrl: string): z.infer<typeof hookWithSecretSchema> {
  return { ...hookView(created.hook, baseUrl), secret: created.secret };
}

export function hookListView(page: Page<HookRecord>, baseUrl: string): z.infer<typeof hookListSchema> {
  return { hooks: page.items.map((hook) => hookView(hook, baseUrl)), nextCursor: page.nextCursor };
}

/** 202 with the case while it runs; 200 with its results (as GET …/results answers them) once it ended. */
export function deliveryView(hookId: string, outcome: DeliveryOutcome): Answer {
  const { record } = outcome;
  if (outcome.kind === 'finished') {
    const body: z.infer<typeof deliveryFinishedSchema> = {
      caseId: record.id,
      hookId,
      status: record.status,
      results: outcome.results,
    };
    return { status: 200, body };
  }
  const body: z.infer<typeof deliveryAcceptedSchema> = {
    caseId: record.id,
    hookId,
    status: record.status,
    workflowVersionId: record.workflowVersionId,
    workflowVersionNumber: record.workflowVersionNumber,
  };
  return { status: 202, body };
}
