import { z } from 'zod';
import { uuid, queryInt } from './common.js';

/** The contract's bounds on credentialData; testInputData (the contract is silent) gets the same byte bound. */
export const credentialDataLimits = { fields: 100, bytes: 64 * 1024 } as const;

/** A JSON object of at most `maxFields` keys and `bytes` UTF-8 bytes once encoded. */
const boundedObject = (bytes: number, maxFields = Infinity) =>
  z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    if (Object.keys(value).length > maxFields) ctx.addIssue({ code: 'custom', message: `at most ${maxFields} fields` });
    else if (Buffer.byteLength(JSON.stringify(value), 'utf8') > bytes)
      ctx.addIssue({ code: 'custom', message: `at most ${bytes} bytes as JSON` });
  });

const credentialData = boundedObject(credentialDataLimits.bytes, credentialDataLimits.fields).meta({
  description:
    "Secret values keyed by the credential template's variableNames; encrypted at rest, never returned. At most 100 fields and 64 KB",
});

export const connectionFields = z
  .object({
    name: z.string().trim().min(1).max(255),
    workspaceId: z.string().meta({
      description:
        'Workspace to activate in (checked first: anything but a workspace the key holds Integration: Full in is 403)',
    }),
    integrationVersionId: uuid.meta({ description: '`versionId` from integration creation' }),
    actionVersionId: uuid.meta({ description: 'Action enabled on this connection' }),
    credentialVersionId: uuid.optional().meta({ description: 'Required unless activeCredentialId is used' }),
    credentialData: credentialData.optional(),
    activeCredentialId: uuid
      .optional()
      .meta({ description: "Reuse an existing connection's credential (same workspace); omit credentialData then" }),
    description: z.string().max(2048).optional(),
    testActionVersionId: uuid
      .optional()
      .meta({ description: 'Action whose endpoint is called for a smoke test; omit for no test' }),
    testInputData: boundedObject(credentialDataLimits.bytes).optional().meta({
      description:
        'Sent as the JSON body of the smoke test (POST); without it the test is a GET. At most 64 KB (it travels through Temporal history)',
    }),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.credentialVersionId === undefined && value.activeCredentialId === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['credentialVersionId'],
        message: 'credentialVersionId or activeCredentialId is required',
      });
    }
    if (value.credentialData !== undefined && value.activeCredentialId !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['credentialData'],
        message: 'omit credentialData when activeCredentialId reuses a credential',
      });
    }
  })
  // The two rules above as JSON Schema too, so the document states them (meta after the refine: it makes a new schema).
  .meta({
    anyOf: [{ required: ['credentialVersionId'] }, { required: ['activeCredentialId'] }],
    not: { required: ['credentialData', 'activeCredentialId'] },
  });

export const connectBody = z.object({ connection: connectionFields });

export const connectResponse = z.object({
  status: z.enum(['connected', 'pending_authorization']),
  activeIntegrationId: z
    .string()
    .nullable()
    .meta({ description: 'What an integration_action node names as connection_id; null until OAuth completes' }),
  activeIntegrationVersionId: z.string(),
  activeCredentialId: z.string(),
  workspaceId: z.string(),
  testPassed: z.boolean().nullable().meta({ description: 'null when no test ran (not a pass)' }),
  testError: z
    .string()
    .nullable()
    .meta({ description: 'HTTP <status>: the first 200 characters of the body, or the network error' }),
  authorizationUrl: z.string().nullable().meta({
    description:
      "OAuth only: the provider's authorization URL (authorization code with PKCE S256) to open in a browser; null otherwise",
  }),
  connectionToken: z.string().nullable().meta({
    description:
      'OAuth only: valid 10 minutes; GET /api/v1/integration/connect/{connectionToken} reads the outcome. Shown once; null otherwise',
  }),
});

const nullUntilConnected = (what: string) =>
  z
    .string()
    .nullable()
    .meta({ description: `${what}; null until the authorization succeeded` });

export const connectionCheckResponse = z.object({
  status: z.enum(['pending', 'succeeded', 'failed', 'expired']).meta({
    description:
      'pending until a person authorizes or 10 minutes pass; expired also for an unknown token, another caller’s, or one of a workspace the key cannot read',
  }),
  activeIntegrationId: nullUntilConnected('What an integration_action node names as connection_id'),
  activeIntegrationVersionId: nullUntilConnected('The integration version connected'),
  activeCredentialId: nullUntilConnected('The credential holding the tokens (encrypted)'),
  workspaceId: nullUntilConnected('The workspace connected into'),
  testPassed: z
    .boolean()
    .nullable()
    .meta({ description: 'The smoke test run after authorization; null when none ran (not a pass)' }),
  testError: z.string().nullable(),
});

export const connectionTokenParams = z.object({
  connectionToken: z.string().meta({ description: 'The connectionToken returned by Connect' }),
});

/** Four of these, percent-encoded, stay within the API server's request-head limit (service.ts). */
const callbackValue = z.string().max(1024).optional();

export const oauthCallbackQuery = z.object({
  state: callbackValue.meta({ description: 'The attempt this redirect belongs to (usable once)' }),
  code: callbackValue.meta({ description: 'The authorization code, when the person consented' }),
  error: callbackValue.meta({ description: 'The provider’s error (access_denied when consent was denied)' }),
  error_description: callbackValue,
});

export const connectionResponse = z.object({
  id: z.string().meta({ description: 'The activeIntegrationId' }),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(['connected', 'pending_authorization', 'needs_reauthorization', 'revoked']),
  workspaceId: z.string(),
  integrationId: z.string(),
  integrationVersionId: z.string(),
  actionVersionId: z.string(),
  activeCredentialId: z.string(),
  testActionVersionId: z.string().nullable(),
  testPassed: z.boolean().nullable(),
  testError: z.string().nullable(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
});

export const connectionListQuery = z.object({
  limit: queryInt({ min: 1, max: 200 }).default(50),
  offset: queryInt({ min: 0 }).default(0),
});

export const connectionListResponse = z.object({
  connections: z.array(connectionResponse),
  limit: z.number(),
  offset: z.number(),
});
