import type { NextFunction, Request, Response } from 'express';
import type { Payload } from '@temporalio/common';
import { z } from 'zod';
import { publicUrl, type Config } from '../config/config.js';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { PayloadEncryptionError } from '../temporal/payload-encryption.js';
import { requireAdmin } from './admin.routes.js';
import type { ApiRoutes } from './route.js';

/**
 * Temporal's codec server protocol, for operators: the Temporal UI (`--ui-codec-endpoint`, or its
 * codec settings) and `temporal workflow show --codec-endpoint … --codec-auth "Bearer <admin token>"`
 * post `{payloads}` and get them back decoded or encoded. Under /admin, so the admin token is checked
 * before the body is read and a tenant key opens nothing.
 */
const base = '/admin/temporal-codec';

/** Where the embedded UI finds this codec: only with the admin area on and a URL known before listening. */
export function temporalCodecEndpoint(config: Config): string | undefined {
  if (!config.adminToken || (!config.publicUrl && config.port === 0)) return undefined;
  return `${publicUrl(config)}${base}`;
}

/** A Payload in proto3 JSON: metadata values and data in base64. */
const jsonPayload = z.object({
  metadata: z.record(z.string(), z.base64()).optional(),
  data: z.base64().optional(),
});
// How many fit is bounded by the body limit (CASEFLOW_BODY_LIMIT).
const payloadsBody = z.object({ payloads: z.array(jsonPayload) });
type JsonPayload = z.infer<typeof jsonPayload>;

function fromJson(payload: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    ),
    data: Buffer.from(payload.data ?? '', 'base64'),
  };
}

function toJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    ),
    data: Buffer.from(payload.data ?? []).toString('base64'),
  };
}

/**
 * CORS for the configured Temporal UI's origin only, credentials allowed (the UI may send cookies or
 * its access token). Mounted before the admin gate: a preflight carries no credentials by design,
 * and a refusal must carry the headers for the UI to read it.
 */
export function temporalCodecCors(ctx: AppContext): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    // Without the admin token the operator area does not exist (404 from the gate), preflights included.
    if (!ctx.config.adminToken || !req.path.startsWith(`${base}/`)) {
      next();
      return;
    }
    // Read per request: the embedded UI's address is known once Temporal is connected, not at registration.
    const uiOrigin = ctx.temporal.uiUrl ? new URL(ctx.temporal.uiUrl).origin : undefined;
    res.vary('Origin');
    const allowed = uiOrigin !== undefined && req.headers.origin === uiOrigin;
    if (allowed) res.set({ 'Access-Control-Allow-Origin': uiOrigin, 'Access-Control-Allow-Credentials': 'true' });
    if (req.method !== 'OPTIONS') {
      next();
      return;
    }
    if (!allowed) throw DomainError.forbidden('Origin is not the configured Temporal UI');
    res
      .set({
        'Access-Control-Allow-Methods': 'POST',
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Namespace',
        'Access-Control-Max-Age': '600',
      })
      .status(204)
      .end();
  };
}

export function registerTemporalCodecRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { namespace } = ctx.config.temporal;
  const headers = z.object({
    authorization: z.string().meta({ description: 'Bearer <CASEFLOW_ADMIN_TOKEN>' }),
    'x-namespace': z.enum([namespace]).optional().meta({ description: "The namespace (this service's only)" }),
  });
  const operations = [
    {
      name: 'decode',
      summary: 'Decrypt Temporal payloads (codec server protocol; others pass through)',
      apply: (payloads: Payload[]) => ctx.temporal.codec.decode(payloads),
    },
    {
      name: 'encode',
      summary: 'Encrypt Temporal payloads (codec server protocol)',
      apply: (payloads: Payload[]) => ctx.temporal.codec.encode(payloads),
    },
  ];
  for (const operation of operations) {
    api.route({
      method: 'post',
      path: `${base}/${operation.name}`,
      summary: operation.summary,
      tags: ['Operator'],
      auth: false,
      headers,
      body: payloadsBody,
      responses: {
        200: { description: 'The payloads, in order', schema: payloadsBody },
        400: { description: 'Malformed payloads, another namespace, or a payload no configured key opens' },
        401: { description: 'Missing or invalid admin token' },
      },
      handler: async ({ req, res, body }) => {
        requireAdmin(ctx, req);
        const asked = req.headers['x-namespace'];
        if (asked !== undefined && asked !== namespace) {
          throw DomainError.badRequest(`This codec serves namespace "${namespace}", not "${String(asked)}"`);
        }
        try {
          const payloads = await operation.apply(body.payloads.map(fromJson));
          res.json({ payloads: payloads.map(toJson) });
        } catch (err) {
          if (err instanceof PayloadEncryptionError) throw DomainError.badRequest(err.message);
          throw err;
        }
      },
    });
  }
}
