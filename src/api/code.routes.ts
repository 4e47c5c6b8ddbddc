import type { Request } from 'express';
import { z } from 'zod';
import { requireOrganizationGrant } from '../auth/access.js';
import type { AuthContext } from '../auth/auth-context.js';
import type { AppContext } from '../context.js';
import { CodeNodeRepo, type CodeNodeContent, type CodeNodeVersion } from '../store/code-node-repo.js';
import { DomainError } from '../errors.js';
import { scanSourceOrThrow } from './python-source-gates.js';
import { parseOrThrow, type ApiRoutes } from './route.js';
import { catalogFieldMapSchema, catalogFieldSchema } from './schemas/catalog-fields.js';
import { uuid } from './schemas/common.js';

/** The contract's code-node limits (Limits table). */
const codeNodeLimits = {
  name: 255,
  description: 2048,
  icon: 65535,
  sourceCodeBytes: 262144,
  categories: 5,
  variables: 100,
  variablesJsonBytes: 512 * 1024,
  listEntries: 20,
} as const;

/** Top-level code-node fields, which `nonEditableFields` may name. */
const codeNodeFieldNames = ['name', 'description', 'icon', 'sourceCode', 'categories', 'inputs', 'outputs', 'tags', 'options'] as const;

const updatableFields = [...codeNodeFieldNames, 'nonEditableFields'] as const;

const label = z.string().min(1).max(codeNodeLimits.name);
const sourceCode = z
  .string()
  .min(1)
  .refine((source) => Buffer.byteLength(source, 'utf8') <= codeNodeLimits.sourceCodeBytes, {
    message: `sourceCode is at most ${codeNodeLimits.sourceCodeBytes} bytes UTF-8 encoded`,
  })
  .meta({ description: `Python module defining main(inputs) -> dict; max ${codeNodeLimits.sourceCodeBytes} bytes UTF-8 encoded` });
const variables = catalogFieldMapSchema({ maxEntries: codeNodeLimits.variables, maxJsonBytes: codeNodeLimits.variablesJsonBytes });
const description = z.string().max(codeNodeLimits.description);
const icon = z.string().max(codeNodeLimits.icon);
const categories = z.array(label).max(codeNodeLimits.categories);
const tags = z.array(label).max(codeNodeLimits.listEntries);
const options = z.array(z.record(z.string(), z.unknown())).max(codeNodeLimits.listEntries);
const nonEditableFields = z.array(z.enum(codeNodeFieldNames)).max(codeNodeLimits.listEntries);
/** Code nodes belong to the organization; a workspace id in the body is a caller mistake, said so loudly. */
const noWorkspace = z
  .never({ error: 'no workspace id is accepted: code nodes belong to the organization of the API key' })
  .optional()
  .meta({ description: 'Not accepted (400)' });

const createBody = z
  .object({
    name: label,
    description: description.optional(),
    icon: icon.optional(),
    sourceCode,
    categories: categories.default([]),
    inputs: variables,
    outputs: variables,
    tags: tags.default([]),
    options: options.default([]),
    nonEditableFields: nonEditableFields.default([]),
    workspaceId: noWorkspace,
  })
  .meta({ description: 'Unknown fields such as providerId are ignored.' });

const updateBody = z
  .object({
    name: label.optional(),
    description: description.nullable().optional().meta({ description: 'null clears it' }),
    icon: icon.nullable().optional().meta({ description: 'null clears it' }),
    sourceCode: sourceCode.optional(),
    categories: categories.optional(),
    inputs: variables.optional().meta({ description: 'Replaces all inputs' }),
    outputs: variables.optional().meta({ description: 'Replaces all outputs' }),
    tags: tags.optional(),
    options: options.optional(),
    nonEditableFields: nonEditableFields.optional(),
    workspaceId: noWorkspace,
  })
  .refine((body) => updatableFields.some((name) => body[name] !== undefined), {
    message: 'nothing to update: send at least one code node field',
  })
  .meta({ description: 'Any subset of the fields; the rest carry over from the latest version. Unknown fields such as providerId are ignored.' });

type UpdateBody = z.infer<typeof updateBody>;

const codeNodeResponse = z.object({
  id: z.string(),
  versionId: z.string(),
  versionNumber: z.number().int().meta({ description: '1 at creation, +1 per update' }),
  name: z.string(),
  description: z.string().nullable(),
  icon: z.string().nullable(),
  sourceCode: z.string(),
  categories: z.array(z.string()),
  inputs: z.record(z.string(), catalogFieldSchema),
  outputs: z.record(z.string(), catalogFieldSchema),
  tags: z.array(z.string()),
  options: z.array(z.record(z.string(), z.unknown())),
  nonEditableFields: z.array(z.string()),
  createdAt: z.string().meta({ description: 'When the code node was registered' }),
  versionCreatedAt: z.string().meta({ description: 'When this version was cut' }),
});

/** A 400 carries either the field errors of validation or the scan's violations. */
const badRequestBody = z.object({
  statusCode: z.literal(400),
  message: z.string(),
  errorCode: z.string().meta({ description: 'VALIDATION_ERROR (fields) or BAD_REQUEST (violations)' }),
  timestamp: z.string(),
  path: z.string(),
  metadata: z.object({
    fields: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    violations: z
      .array(z.object({ line: z.number().int(), col: z.number().int(), message: z.string() }))
      .optional()
      .meta({ description: 'Security-scan findings; line and col are 1-based' }),
  }),
});

/** Concurrent updates of one code node: how often an update re-reads its base before giving up with 409. */
const UPDATE_ATTEMPTS = 5;

function toResponse(version: CodeNodeVersion): z.infer<typeof codeNodeResponse> {
  return {
    id: version.id,
    versionId: version.versionId,
    versionNumber: version.versionNumber,
    name: version.name,
    description: version.description,
    icon: version.icon,
    sourceCode: version.sourceCode,
    categories: version.categories,
    inputs: version.inputs,
    outputs: version.outputs,
    tags: version.tags,
    options: version.options,
    nonEditableFields: version.nonEditableFields,
    createdAt: version.createdAt,
    versionCreatedAt: version.versionCreatedAt,
  };
}

/** The contract's first check: organization-scoped key, Code: Full, verified organization. */
function authorize(auth: AuthContext, req: Request): void {
  requireOrganizationGrant(auth, 'code:full', { verified: true });
  if (req.get('x-workspace-id') !== undefined) {
    throw DomainError.badRequest('no workspace id is accepted: code nodes belong to the organization of the API key');
  }
}

function mergeUpdate(base: CodeNodeContent, body: UpdateBody): CodeNodeContent {
  return {
    name: body.name ?? base.name,
    description: body.description === undefined ? base.description : body.description,
    icon: body.icon === undefined ? base.icon : body.icon,
    sourceCode: body.sourceCode ?? base.sourceCode,
    categories: body.categories ?? base.categories,
    inputs: body.inputs ?? base.inputs,
    outputs: body.outputs ?? base.outputs,
    tags: body.tags ?? base.tags,
    options: body.options ?? base.options,
    nonEditableFields: body.nonEditableFields ?? base.nonEditableFields,
  };
}

export function registerCodeRoutes(api: ApiRoutes, ctx: AppContext): void {
  const repo = new CodeNodeRepo(ctx.store.db);

  const scanOrThrow = (source: string) => scanSourceOrThrow(ctx, source, 'sourceCode');

  const common = {
    tags: ['Code nodes'],
    auth: true as const,
    validateBody: false,
  };
  const errors = {
    401: { description: 'Missing, invalid or expired key' },
    403: { description: 'Key not organization-scoped, Code: Full missing, or organization not verified (checked before the body)' },
    503: { description: 'The source scanner is unavailable' },
  };

  api.route({
    ...common,
    method: 'post',
    path: '/api/v1/code',
    summary: 'Register a code node',
    description:
      'Registers a Python code node in the catalog of the key\'s organization and cuts its first version. The source is scanned ' +
      '(blocked imports and constructs, the reserved SDK name `caseflow`) before anything is stored. No workspace id is accepted; providerId is ignored.',
    body: createBody,
    responses: {
      201: { description: 'Registered: the stored first version', schema: codeNodeResponse },
      400: { description: 'Invalid body, a value over its limit, or security-scan violations (metadata.violations)', schema: badRequestBody },
      ...errors,
    },
    handler: async ({ req, res, auth }) => {
      authorize(auth, req);
      const body = parseOrThrow(createBody, req.body ?? {}, 'body');
      await scanOrThrow(body.sourceCode);
      const created = await repo.create(auth.organizationId, auth.userId, {
        name: body.name,
        description: body.description ?? null,
        icon: body.icon ?? null,
        sourceCode: body.sourceCode,
        categories: body.categories,
        inputs: body.inputs,
        outputs: body.outputs,
        tags: body.tags,
        options: body.options,
        nonEditableFields: body.nonEditableFields,
      });
      res.status(201).json(toResponse(created));
    },
  });

  api.route({
    ...common,
    method: 'patch',
    path: '/api/v1/code/:codeId',
    summary: 'Update a code node (cuts a new version)',
    description:
      'Updates any subset of the fields and cuts a new version with a new versionId; earlier versions stay addressable. ' +
      '`sourceCode`, `inputs` and `outputs` are replaced wholesale. The resulting source is scanned again.',
    // Documented only: the UUID is checked in the handler, after the permission check the contract puts first.
    params: z.object({ codeId: z.string().meta({ description: 'The code node id (UUID) returned at creation' }) }),
    body: updateBody,
    responses: {
      200: { description: 'Updated: the new version', schema: codeNodeResponse },
      400: { description: 'Malformed codeId, invalid body, a value over its limit, or security-scan violations (metadata.violations)', schema: badRequestBody },
      404: { description: 'No code node with this id in the key\'s organization' },
      409: { description: 'Concurrent updates kept moving the latest version; retry' },
      ...errors,
    },
    handler: async ({ req, res, auth }) => {
      authorize(auth, req);
      const { codeId } = parseOrThrow(z.object({ codeId: uuid }), req.params, 'path');
      const body = parseOrThrow(updateBody, req.body ?? {}, 'body');
      let scanned: string | undefined;
      for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
        const latest = await repo.findLatest(codeId);
        // Another organization's code node is as absent as an unknown one: its existence is not disclosed.
        if (!latest || latest.organizationId !== auth.organizationId) throw DomainError.notFound(`Code node ${codeId} does not exist`);
        const content = mergeUpdate(latest, body);
        // Every version must pass the scan under the current policy, including a carried-over source.
        if (scanned !== content.sourceCode) {
          await scanOrThrow(content.sourceCode);
          scanned = content.sourceCode;
        }
        const version = await repo.addVersion(codeId, latest.versionNumber, auth.userId, content);
        if (version) {
          res.json(toResponse(version));
          return;
        }
      }
      throw DomainError.conflict('The code node is being updated concurrently; retry');
    },
  });
}
