import { z } from 'zod';
import type { AppContext } from '../context.js';
import { grantSchema } from '../domain/grants.js';
import type { ApiRoutes } from './route.js';

const meSchema = z.object({
  keyId: z.string(),
  userId: z.string(),
  organizationId: z.string(),
  organizationVerified: z.boolean(),
  scope: z.union([
    z.object({ type: z.literal('organization') }),
    z.object({ type: z.literal('workspaces'), workspaceIds: z.array(z.string()) }),
  ]),
  grants: z.array(grantSchema),
  workspaces: z.array(z.object({ id: z.string(), name: z.string() })),
});

/** Who the presented key is: lets a developer check a key and what it reaches before calling anything else. */
export function registerMeRoutes(api: ApiRoutes, ctx: AppContext): void {
  api.route({
    method: 'get',
    path: '/api/v1/me',
    summary: 'Describe the calling API key: organization, scope, grants and reachable workspaces',
    tags: ['Keys'],
    auth: true,
    responses: { 200: { description: 'The key', schema: meSchema } },
    handler: async ({ res, auth }) => {
      const workspaces = (await ctx.services.tenancy.reachableWorkspaces(auth)).map((w) => ({
        id: w.id,
        name: w.name,
      }));
      const me: z.infer<typeof meSchema> = {
        keyId: auth.keyId,
        userId: auth.userId,
        organizationId: auth.organizationId,
        organizationVerified: auth.organizationVerified,
        scope: auth.scope,
        grants: [...auth.grants],
        workspaces,
      };
      res.json(me);
    },
  });
}
