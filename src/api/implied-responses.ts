import type { ZodType } from 'zod';
import type { ResponseSpec } from './route.js';

/** What a route's declaration says about how it is called; enough to know the errors the plumbing answers. */
export interface RouteShape {
  path: string;
  auth: boolean;
  params?: ZodType;
  query?: ZodType;
  body?: ZodType;
  bodyMediaType?: string;
  /** Implied statuses the route never answers, such as a 404 where the contract promises none. */
  neverAnswers?: readonly number[];
}

/**
 * The error statuses every route of a shape can answer whatever its handler
 * does: the key check, validation of what it takes, the lookup of a path id,
 * the JSON body parser's size limit. Routes declare only their success and
 * their own refusals; these are documented for them, so the document cannot
 * forget a status the plumbing sends.
 */
export function impliedResponses(route: RouteShape): Record<number, ResponseSpec> {
  const implied: Record<number, ResponseSpec> = {};
  const jsonBody = route.body !== undefined && (route.bodyMediaType ?? 'application/json') === 'application/json';
  if (route.params || route.query || route.body) {
    implied[400] = {
      description: jsonBody
        ? 'Malformed JSON or an invalid path, query or body (metadata.fields names each bad field)'
        : 'An invalid path or query (metadata.fields names each bad field)',
    };
  }
  if (route.auth) {
    implied[401] = { description: 'Missing, invalid or expired API key' };
    implied[403] = { description: 'The key lacks the permission this operation needs' };
  }
  if (route.path.includes(':')) implied[404] = { description: 'What the path names does not exist' };
  if (jsonBody) implied[413] = { description: 'The body is over the configured size limit' };
  const never = new Set(route.neverAnswers);
  return Object.fromEntries(Object.entries(implied).filter(([status]) => !never.has(Number(status))));
}
