import type { Request } from 'express';
import { z } from 'zod';
import type { AuthContext } from '../domain/auth-context.js';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { parseOrThrow, type ApiRoutes } from './route.js';
import {
  codeNodeBadRequestBody,
  codeNodeResponse,
  createCodeNodeBody,
  updateCodeNodeBody,
} from './schemas/code-nodes.js';
import { uuid } from './schemas/common.js';
import { codeNodeView } from './views/code-nodes.js';

export function registerCodeRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { codeNodes } = ctx.services;

  /** Authorization comes first (403 before 400); code nodes belong to the organization, never to a workspace. */
  function authorize(auth: AuthContext, req: Request): void {
    codeNodes.authorize(auth);
    if (req.get('x-workspace-id') !== undefined) {
      throw DomainError.badRequest('no workspace id is accepted: code nodes belong to the organization of the API key');
    }
  }

  const common = {
    tags: ['Code nodes'],
    auth: true as const,
    validateParams: false,
    validateBody: false,
  };
  const errors = {
    401: { description: 'Missing, invalid or expired key' },
    403: {
      description:
        'Key not organization-scoped, Code: Full missing, or organization not verified (checked before the body)',
    },
    503: { description: 'The source scanner is unavailable' },
  };

  api.route({
    ...common,
    method: 'post',
    path: '/api/v1/code',
    summary: 'Register a code node',
    description:
      "Registers a Python code node in the catalog of the key's organization and cuts its first version. The source is scanned " +
      '(blocked imports and constructs, the reserved SDK name `caseflow`) before anything is stored. No workspace id is accepted; providerId is ignored.',
    body: createCodeNodeBody,
    responses: {
      201: { description: 'Registered: the stored first version', schema: codeNodeResponse },
      400: {
        description: 'Invalid body, a value over its limit, or security-scan violations (metadata.violations)',
        schema: codeNodeBadRequestBody,
      },
      ...errors,
    },
    handler: async ({ req, res, auth }) => {
      authorize(auth, req);
      const body = parseOrThrow(createCodeNodeBody, req.body ?? {}, 'body');
      const created = await codeNodes.create(auth, {
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
      res.status(201).json(codeNodeView(created));
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
    // Checked in the handler, after the permission check the contract puts first.
    params: z.object({ codeId: uuid.meta({ description: 'The code node id returned at creation' }) }),
    body: updateCodeNodeBody,
    responses: {
      200: { description: 'Updated: the new version', schema: codeNodeResponse },
      400: {
        description:
          'Malformed codeId, invalid body, a value over its limit, or security-scan violations (metadata.violations)',
        schema: codeNodeBadRequestBody,
      },
      404: { description: "No code node with this id in the key's organization" },
      409: { description: 'Concurrent updates kept moving the latest version; retry' },
      ...errors,
    },
    handler: async ({ req, res, auth }) => {
      authorize(auth, req);
      const { codeId } = parseOrThrow(z.object({ codeId: uuid }), req.params, 'path');
      const body = parseOrThrow(updateCodeNodeBody, req.body ?? {}, 'body');
      res.json(codeNodeView(await codeNodes.update(auth, codeId, body)));
    },
  });
}
