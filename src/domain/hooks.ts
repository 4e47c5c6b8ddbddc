/** How a hook's deliveries prove they come from its sender (docs/webhook-triggers.md). */
export const hookSchemes = ['standard-webhooks', 'github', 'stripe', 'hmac-sha256'] as const;
export type HookScheme = (typeof hookSchemes)[number];

/** async: 202 with the caseId at once; sync: the results when the case ends within the hook's bound. */
export const hookModes = ['async', 'sync'] as const;
export type HookMode = (typeof hookModes)[number];

/** Where one workflow input takes its value from in a delivery: a JSON Pointer into the body, a header, or a constant. */
export type InputSource = { body: string } | { header: string } | { value: unknown };

/** Workflow input name → its source; a hook without one takes the JSON body object as the inputs. */
export type HookMapping = Record<string, InputSource>;

export interface HookRecord {
  id: string;
  organizationId: string;
  workspaceId: string;
  workflowId: string;
  name: string;
  scheme: HookScheme;
  signatureHeader: string | null;
  mapping: HookMapping | null;
  mode: HookMode;
  syncTimeoutMs: number;
  toleranceSeconds: number;
  rateLimitPerMinute: number;
  enabled: boolean;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: string | null;
  createdByKeyId: string;
  createdByUserId: string;
  createdAt: string;
  updatedAt: string;
}
