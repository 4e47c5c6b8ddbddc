import { z } from 'zod';
import { atLeastOneOf } from '../../domain/at-least-one.js';
import { credentialValueMatchesType } from '../../catalog/credential-fields.js';
import { BASE64, iconProblem } from '../../catalog/icon.js';
import {
  authTypes,
  credentialFieldTypes,
  credentialStatuses,
  integrationStatuses,
  requiredPlans,
  type ActionContent,
  type CredentialContent,
  type IntegrationDraft,
} from '../../domain/catalog.js';
import { catalogFieldMapSchema, catalogFieldSchema } from './catalog-fields.js';
import { idempotencyKeyValue, queryInt } from './common.js';

/** The contract's integration limits (Limits table), plus our bounds where it is silent. */
export const catalogLimits = {
  name: 255,
  description: 2048,
  icon: 65535,
  categories: 5,
  actions: 50,
  endpoint: 2048,
  code: 65535,
  /** Not in the contract: the code node's bounds, so one action cannot fill the store. */
  actionVariables: 100,
  actionVariablesJsonBytes: 512 * 1024,
  /** credentialData holds at most 100 fields, so a template has no use for more. */
  credentialInputs: 100,
} as const;

const name = z.string().trim().min(1).max(catalogLimits.name);
const description = z.string().max(catalogLimits.description);
const icon = z
  .string()
  .max(catalogLimits.icon)
  .superRefine((value, ctx) => {
    const problem = iconProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    description: `Base64-encoded SVG or PNG, no data: prefix; the decoded bytes are checked; max ${catalogLimits.icon} chars`,
    // The base64 part of the check, for the document (the bytes' check cannot be a JSON Schema).
    pattern: BASE64.source,
    minLength: 4,
    contentEncoding: 'base64',
  });

export const providerBody = z.object({ name });
export const providerResponse = z.object({ id: z.string(), name: z.string(), createdAt: z.string() });
export const providerListResponse = z.object({ providers: z.array(providerResponse) });

const credentialField = z
  .object({
    displayName: name,
    variableName: name,
    type: z.enum(credentialFieldTypes),
    order: z.number().default(1).meta({ description: 'UI order' }),
    placeholder: z.string().max(catalogLimits.name).optional(),
    isSecret: z.boolean().default(true).meta({ description: 'Masked in UI, encrypted at rest' }),
    isNullable: z.boolean().default(true),
    isEditable: z.boolean().default(true),
    isVisible: z.boolean().default(true),
    default: z.unknown().optional().meta({ description: 'Pre-filled value; must match `type`' }),
  })
  .superRefine((field, ctx) => {
    if (field.default !== undefined && !credentialValueMatchesType(field.default, field.type)) {
      ctx.addIssue({ code: 'custom', path: ['default'], message: `default does not match type ${field.type}` });
    }
  })
  .meta({ id: 'CredentialField' });

const credentialInputs = z
  .record(z.string(), credentialField)
  .superRefine((map, ctx) => {
    const keys = Object.keys(map);
    if (keys.length > catalogLimits.credentialInputs)
      ctx.addIssue({ code: 'custom', message: `at most ${catalogLimits.credentialInputs} inputs` });
    for (const [key, field] of Object.entries(map)) {
      if (field.variableName !== key) {
        ctx.addIssue({
          code: 'custom',
          path: [key, 'variableName'],
          message: `variableName '${field.variableName}' must equal its map key '${key}'`,
        });
      }
    }
  })
  .meta({ description: `Credential inputs keyed by variableName (max ${catalogLimits.credentialInputs})` });

/** The credential template: the body of the credential call and the inline `credential` of an integration. */
export const credentialTemplate = z.object({
  name,
  icon,
  inputs: credentialInputs,
  description: description.optional(),
  authType: z.enum(authTypes).default('api_key'),
  status: z.enum(credentialStatuses).default('active'),
});
export const credentialBody = z.object({ credential: credentialTemplate });

const fieldMap = catalogFieldMapSchema({
  maxEntries: catalogLimits.actionVariables,
  maxJsonBytes: catalogLimits.actionVariablesJsonBytes,
});
const endpoint = z
  .string()
  .min(1)
  .max(catalogLimits.endpoint)
  .meta({ description: 'External endpoint; a connection smoke test calls it' });
const code = z.string().max(catalogLimits.code).meta({
  description:
    'Python run in global scope: reads input_data[...] and credential_value, assigns result[...]; scanned at save',
});

export const actionSchema = z.object({
  name,
  endpoint,
  inputs: fieldMap,
  outputs: fieldMap,
  description: description.optional(),
  code: code.optional(),
});

export const actionBody = z.object({ action: actionSchema });

const category = z
  .array(name)
  .min(1, 'at least one category')
  .max(catalogLimits.categories, `at most ${catalogLimits.categories} categories`);

export const integrationSchema = z.object({
  name,
  description: description.optional(),
  icon,
  category,
  providerId: z
    .uuid({ message: 'must be a UUID' })
    .meta({ description: "A provider of the caller's organization (POST /api/v1/provider)" }),
  requiredPlan: z.enum(requiredPlans).default('core'),
  status: z.enum(integrationStatuses).default('active'),
  isNew: z.boolean().default(false),
  isPopular: z.boolean().default(false),
  isBeta: z.boolean().default(false).meta({ description: 'Accepted and stored; not echoed' }),
  actions: z.array(actionSchema).max(catalogLimits.actions, `at most ${catalogLimits.actions} actions`).default([]),
  credential: credentialTemplate.optional(),
});
export const integrationBody = z.object({ integration: integrationSchema });

export function actionContent(action: z.infer<typeof actionSchema>): ActionContent {
  return { ...action, description: action.description ?? null, code: action.code ?? null };
}

export function credentialContent(credential: z.infer<typeof credentialTemplate>): CredentialContent {
  return { ...credential, description: credential.description ?? null };
}

/** The domain draft of a parsed integration body (the API route and the operator's publish command share it). */
export function integrationDraft(integration: z.infer<typeof integrationSchema>): IntegrationDraft {
  const { providerId, actions, credential, description, ...content } = integration;
  return {
    providerId,
    content: { ...content, description: description ?? null },
    actions: actions.map(actionContent),
    credential: credential ? credentialContent(credential) : null,
  };
}

/** At least one field: an update with nothing in it would cut an identical version. */
function nonEmpty<T extends z.ZodObject>(schema: T) {
  return atLeastOneOf(schema, Object.keys(schema.shape), 'nothing to update: send at least one field');
}

export const integrationUpdateBody = z.object({
  integration: nonEmpty(
    z.object({
      name: name.optional(),
      description: description.nullable().optional().meta({ description: 'null clears it' }),
      icon: icon.optional(),
      category: category.optional(),
      requiredPlan: z.enum(requiredPlans).optional(),
      status: z.enum(integrationStatuses).optional(),
      isNew: z.boolean().optional(),
      isPopular: z.boolean().optional(),
      isBeta: z.boolean().optional(),
    }),
  ),
});

export const actionUpdateBody = z.object({
  action: nonEmpty(
    z.object({
      name: name.optional(),
      endpoint: endpoint.optional(),
      inputs: fieldMap.optional().meta({ description: 'Replaces all inputs' }),
      outputs: fieldMap.optional().meta({ description: 'Replaces all outputs' }),
      description: description.nullable().optional().meta({ description: 'null clears it' }),
      code: code.nullable().optional().meta({ description: 'null removes it' }),
    }),
  ),
});

export const credentialUpdateBody = z.object({
  credential: nonEmpty(
    z.object({
      name: name.optional(),
      icon: icon.optional(),
      inputs: credentialInputs.optional().meta({ description: 'Replaces all inputs' }),
      description: description.nullable().optional().meta({ description: 'null clears it' }),
      status: z.enum(credentialStatuses).optional(),
      authType: z
        .never({ error: 'authType cannot change: add a credential with the other authType instead' })
        .optional(),
    }),
  ),
});

export const idempotencyHeaders = z.object({
  'idempotency-key': idempotencyKeyValue.optional().meta({
    description:
      'A retry with the same key and body within 24 hours returns the first result (header Idempotency-Replayed: true); the same key with another body is 422',
  }),
});

const integrationFields = {
  id: z.string(),
  versionId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  icon: z.string(),
  category: z.array(z.string()),
  requiredPlan: z.enum(requiredPlans),
  status: z.enum(integrationStatuses),
  providerId: z.string(),
  isNew: z.boolean(),
  isPopular: z.boolean(),
};

export const integrationCreatedResponse = z.object({
  ...integrationFields,
  createdActions: z.array(z.object({ actionId: z.string(), actionVersionId: z.string(), name: z.string() })),
  createdCredential: z
    .object({ credentialId: z.string(), credentialVersionId: z.string(), name: z.string() })
    .nullable(),
});

const versionFields = {
  versionNumber: z.number().int().meta({ description: '1 at creation, +1 per update' }),
  createdAt: z.string(),
  versionCreatedAt: z.string().meta({ description: 'When this version was cut' }),
};

export const integrationResponse = z
  .object({
    ...integrationFields,
    ...versionFields,
    published: z.boolean().meta({ description: 'Published by the service, visible to every organization' }),
  })
  .meta({ id: 'Integration' });

export const actionResponse = z
  .object({
    id: z.string(),
    versionId: z.string(),
    integrationId: z.string(),
    name: z.string(),
    endpoint: z.string(),
    description: z.string().nullable(),
    inputs: z.record(z.string(), catalogFieldSchema),
    outputs: z.record(z.string(), catalogFieldSchema),
    code: z.string().nullable(),
    ...versionFields,
  })
  .meta({ id: 'IntegrationAction' });

export const credentialResponse = z
  .object({
    id: z.string(),
    versionId: z.string(),
    integrationId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    inputs: z.record(z.string(), credentialField),
    status: z.enum(credentialStatuses),
    icon: z.string(),
    authType: z.enum(authTypes),
    ...versionFields,
  })
  .meta({ id: 'CredentialTemplate' });

export const integrationDetailResponse = integrationResponse.extend({
  actions: z.array(actionResponse),
  credentials: z.array(credentialResponse),
});
export const integrationListQuery = z.object({
  limit: queryInt({ min: 1, max: 200 }).default(50),
  offset: queryInt({ min: 0 }).default(0),
});
export const integrationListResponse = z.object({
  integrations: z.array(integrationResponse),
  limit: z.number().int(),
  offset: z.number().int(),
});
