import type { NextFunction, Request, Response, Router } from 'express';
import type { z, ZodType } from 'zod';
import { DomainError } from '../errors.js';
import type { OpenApiBuilder } from './openapi.js';
import type { AuthContext } from '../domain/auth-context.js';
import { readableBody } from './request-body.js';
import { impliedResponses } from './implied-responses.js';
import { RateLimitedError } from '../rate-limits/rate-limiter.js';
import { errorBody, httpStatus } from './errors.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  schema?: ZodType;
  /** The response can be an HTML page (besides the JSON error body of a 4xx). */
  html?: boolean;
}

export interface RouteSpec<P extends ZodType, Q extends ZodType, B extends ZodType, A extends boolean> {
  method: Method;
  /** Express-style path (`/api/v1/case/:caseId`); documented as `{caseId}`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  /** false for the routes that take no API key (health, admin, uploads by signed URL). */
  auth: A;
  params?: P;
  /**
   * false: `params` are documented but not validated before the handler,
   * which checks them itself after the permission check the contract puts first.
   */
  validateParams?: boolean;
  query?: Q;
  body?: B;
  /**
   * false: `body` is documented but not validated before the handler, which
   * calls parseOrThrow itself after the checks the contract puts first
   * (permission before validation).
   */
  validateBody?: boolean;
  /** Media type of the body when not JSON (the handler then reads it itself). */
  bodyMediaType?: string;
  /** Documented request headers other than the API key. */
  headers?: z.ZodObject;
  /** Statuses implied by the route's shape that it never answers (implied-responses.ts). */
  neverAnswers?: readonly number[];
  /** The success and the route's own refusals; the errors every route of its shape answers are added (implied-responses.ts). */
  responses: Record<number, ResponseSpec>;
  /**
   * Called when an authenticated request is refused with a 4xx (other than 429), its validation
   * included, so a rate-limited route can count refusals apart from the work it limits (rate-limits.ts).
   */
  onRefused?: (auth: AuthContext, res: Response) => Promise<void>;
  handler: (input: HandlerInput<P, Q, B, A>) => Promise<void> | void;
}

export interface HandlerInput<P extends ZodType, Q extends ZodType, B extends ZodType, A extends boolean> {
  req: Request;
  res: Response;
  params: z.infer<P>;
  query: z.infer<Q>;
  body: z.infer<B>;
  auth: A extends true ? AuthContext : undefined;
}

/** Validation failures become 400 with one entry per bad field in metadata.fields. */
export function parseOrThrow<T extends ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const parsed = schema.safeParse(readableBody(value));
  if (parsed.success) return parsed.data;
  throw DomainError.invalidFields(
    parsed.error.issues.map((issue) => ({
      field: [where, ...issue.path.map(String)].join('.'),
      message: issue.message,
    })),
  );
}

/** A client error the route answered itself; a 429 is the rate limit's own answer. */
function isRefusal(err: unknown): boolean {
  if (!(err instanceof DomainError) || err instanceof RateLimitedError) return false;
  const status = httpStatus(err);
  return status >= 400 && status < 500;
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * The routes of the API. `route()` documents a route in the OpenAPI registry
 * and mounts its handler with the same zod schemas doing the validation, so
 * the served document and the behaviour cannot disagree.
 */
export class ApiRoutes {
  /** The route table: which methods each path answers. */
  private readonly methodsByPath = new Map<string, Set<Method>>();

  constructor(
    readonly router: Router,
    readonly openApi: OpenApiBuilder,
    private readonly authenticate: (req: Request) => Promise<AuthContext>,
  ) {}

  route<
    P extends ZodType = ZodType,
    Q extends ZodType = ZodType,
    B extends ZodType = ZodType,
    A extends boolean = true,
  >(spec: RouteSpec<P, Q, B, A>): void {
    this.openApi.add({
      method: spec.method,
      path: openApiPath(spec.path),
      summary: spec.summary,
      description: spec.description,
      tags: spec.tags,
      deprecated: spec.deprecated,
      secured: spec.auth,
      params: spec.params,
      query: spec.query,
      headers: spec.headers,
      body: spec.body,
      // A missing JSON body is validated as `{}` below, so a body whose fields are all optional may be left out.
      bodyRequired: !spec.body || spec.bodyMediaType !== undefined || !spec.body.safeParse({}).success,
      bodyMediaType: spec.bodyMediaType,
      responses: { ...impliedResponses(spec), ...spec.responses },
    });
    const methods = this.methodsByPath.get(spec.path) ?? new Set<Method>();
    methods.add(spec.method);
    this.methodsByPath.set(spec.path, methods);

    const hasParams = spec.path.includes(':');
    this.router[spec.method](spec.path, async (req: Request, res: Response, next: NextFunction) => {
      // A literal path wins over a parameter: `PATCH /connect` is not `PATCH /:id` with id "connect".
      if (hasParams && this.methodsByPath.has(req.path)) {
        next();
        return;
      }
      const auth = spec.auth ? await this.authenticate(req) : undefined;
      try {
        const params =
          spec.params && spec.validateParams !== false ? parseOrThrow(spec.params, req.params, 'path') : req.params;
        const query = spec.query ? parseOrThrow(spec.query, req.query, 'query') : req.query;
        // A route without a body still refuses one it could not read; with validateBody false the handler reads it.
        const sent: unknown = req.body;
        const body = !spec.body
          ? readableBody(sent)
          : spec.validateBody !== false
            ? parseOrThrow(spec.body, sent ?? {}, 'body')
            : sent;
        await spec.handler({ req, res, params, query, body, auth } as HandlerInput<P, Q, B, A>);
      } catch (err) {
        if (spec.onRefused && auth && isRefusal(err)) await spec.onRefused(auth, res);
        throw err;
      }
    });
  }

  /**
   * Once every route is registered: a known path called with a method it does
   * not answer gets 405 with `Allow` (RFC 9110) instead of falling through to 404.
   */
  rejectOtherMethods(): void {
    // Literal paths first, so `/integration/connect` answers with its own Allow, not that of `/integration/:id`.
    const paths = [...this.methodsByPath].sort(([a], [b]) => Number(a.includes(':')) - Number(b.includes(':')));
    for (const [path, methods] of paths) {
      const allow = [...methods].map((method) => method.toUpperCase()).join(', ');
      // An HTTP-level refusal, not a domain one: answered here in the one error shape.
      this.router.all(path, (req: Request, res: Response) => {
        const message = `${req.method} is not allowed on ${req.path}; allowed: ${allow}`;
        res
          .set('Allow', allow)
          .status(405)
          .json(errorBody(405, 'METHOD_NOT_ALLOWED', message, req.originalUrl));
      });
    }
  }
}
