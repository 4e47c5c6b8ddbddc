import { z, type ZodType } from 'zod';
import { errorBodySchema } from './schemas/common.js';
import type { LinkSpec } from './openapi-links.js';

type JsonSchema = Record<string, unknown>;

export interface OperationSpec {
  method: string;
  /** OpenAPI-style path (`/api/v1/case/{caseId}`). */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  secured: boolean;
  params?: ZodType;
  query?: ZodType;
  headers?: ZodType;
  body?: ZodType;
  /** false when the route takes a missing body as `{}` (every field optional). */
  bodyRequired?: boolean;
  /** Media type of the request body; application/json unless said. */
  bodyMediaType?: string;
  responses: Record<number, { description: string; schema?: ZodType; html?: boolean }>;
}

/**
 * zod 4 emits JSON Schema 2020-12, which is the schema dialect of OpenAPI 3.1,
 * so the document is assembled straight from the schemas the routes validate
 * with: one source for both.
 */
function jsonSchema(schema: ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete out.$schema;
  return out;
}

function parameters(schema: ZodType | undefined, location: 'path' | 'query' | 'header'): JsonSchema[] {
  if (!(schema instanceof z.ZodObject)) return [];
  const object = jsonSchema(schema, 'input');
  const properties = (object.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((object.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      schema: rest,
      ...(description ? { description } : {}),
    };
  });
}

/**
 * zod puts shared and recursive schemas in `$defs` with refs `#/$defs/X`,
 * which resolve only inside that schema; OpenAPI resolves refs from the
 * document root. So they move to `components.schemas` (input variants get an
 * `Input` suffix, since defaults make the two sides differ).
 */
function hoistDefs(schema: JsonSchema, io: 'input' | 'output', components: Record<string, JsonSchema>): JsonSchema {
  const defs = schema.$defs as Record<string, JsonSchema> | undefined;
  if (!defs) return schema;
  delete schema.$defs;
  const name = (id: string) => (io === 'input' ? `${id}Input` : id);
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) =>
        key === '$ref' && typeof inner === 'string' && inner.startsWith('#/$defs/')
          ? [key, `#/components/schemas/${name(inner.slice('#/$defs/'.length))}`]
          : [key, rewrite(inner)],
      ),
    );
  };
  for (const [id, def] of Object.entries(defs)) {
    const { id: _metaId, ...rest } = def;
    components[name(id)] = rewrite(rest) as JsonSchema;
  }
  return rewrite(schema) as JsonSchema;
}

/** `getApiV1CaseCaseId` for GET /api/v1/case/{caseId}: stable, unique per operation, usable as a name in clients. */
function operationIdOf(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method.toLowerCase() + words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');
}

/** One operation's entry under `paths`, its shared schemas hoisted into `schemas`. */
function operationOf(op: OperationSpec, schemas: Record<string, JsonSchema>): JsonSchema {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, spec] of Object.entries(op.responses)) {
    const schema = spec.schema ?? (Number(status) >= 400 ? errorBodySchema : undefined);
    const content: Record<string, JsonSchema> = {};
    if (schema) content['application/json'] = { schema: hoistDefs(jsonSchema(schema, 'output'), 'output', schemas) };
    if (spec.html) content['text/html'] = { schema: { type: 'string' } };
    responses[status] =
      Object.keys(content).length > 0 ? { description: spec.description, content } : { description: spec.description };
  }
  const operation: JsonSchema = {
    operationId: operationIdOf(op.method, op.path),
    summary: op.summary,
    tags: op.tags,
    parameters: [
      ...parameters(op.params, 'path'),
      ...parameters(op.query, 'query'),
      ...parameters(op.headers, 'header'),
    ],
    responses,
  };
  if (op.description) operation.description = op.description;
  if (op.deprecated) operation.deprecated = true;
  if (!op.secured) operation.security = [];
  if (op.body)
    operation.requestBody = {
      required: op.bodyRequired ?? true,
      content: {
        [op.bodyMediaType ?? 'application/json']: {
          schema: hoistDefs(jsonSchema(op.body, 'input'), 'input', schemas),
        },
      },
    };
  return operation;
}

/** Adds each link to its source response (OpenApiBuilder.link checked that both ends exist). */
function addLinks(paths: Record<string, Record<string, JsonSchema>>, links: readonly LinkSpec[]): void {
  const find = (key: string) => {
    const [method = '', path = ''] = key.split(' ');
    return paths[path]?.[method.toLowerCase()] ?? {};
  };
  for (const link of links) {
    const responses = find(link.from).responses as Record<string, JsonSchema>;
    const response = responses[String(link.status)] ?? {};
    const target = find(link.to);
    const targetLinks = (response.links ??= {}) as Record<string, JsonSchema>;
    targetLinks[String(target.operationId)] = {
      operationId: target.operationId,
      ...(link.parameters ? { parameters: link.parameters } : {}),
      ...(link.requestBody ? { requestBody: link.requestBody } : {}),
    };
  }
}

/**
 * The routes' operations and links, recorded as they are registered; the document is assembled from them when
 * asked for (the first `/openapi.json`, the client generator), not at start: its JSON Schemas are ~2.6 MB of heap
 * that a process serving cases would otherwise hold from start.
 */
export class OpenApiBuilder {
  private readonly operations: OperationSpec[] = [];
  private readonly links: LinkSpec[] = [];

  add(op: OperationSpec): void {
    this.operations.push(op);
  }

  /** Checked now, so that a link to an operation or response that does not exist fails at start. */
  link(links: readonly LinkSpec[]): void {
    const find = (key: string) => {
      const [method = '', path = ''] = key.split(' ');
      const operation = this.operations.find((op) => op.path === path && op.method === method.toLowerCase());
      if (!operation) throw new Error(`OpenAPI link names an unknown operation: ${key}`);
      return operation;
    };
    for (const link of links) {
      find(link.to);
      if (!(link.status in find(link.from).responses))
        throw new Error(`OpenAPI link from an undocumented response: ${link.from} ${link.status}`);
    }
    this.links.push(...links);
  }

  document(serverUrl: string): JsonSchema {
    const paths: Record<string, Record<string, JsonSchema>> = {};
    const schemas: Record<string, JsonSchema> = {};
    for (const op of this.operations) (paths[op.path] ??= {})[op.method] = operationOf(op, schemas);
    addLinks(paths, this.links);
    return {
      openapi: '3.1.0',
      info: {
        title: 'caseflow API',
        version: '1',
        description:
          'Workflow automation service: cases (and the deprecated jobs), input schemas, file uploads, workflows and generation runs, ' +
          'the integration / credential / code-node catalog, connections, and discovered processes. ' +
          'Every error has the body `{ statusCode, message, errorCode, timestamp, path, metadata? }`.',
      },
      servers: [{ url: serverUrl }],
      security: [{ serviceKey: [] }, { bearer: [] }],
      paths,
      components: {
        securitySchemes: {
          serviceKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-service-key',
            description: 'API key, issued by an operator and shown once.',
          },
          bearer: { type: 'http', scheme: 'bearer', description: 'The same API key as `Authorization: Bearer <key>`.' },
        },
        schemas: { ...schemas, Error: jsonSchema(errorBodySchema, 'output') },
      },
    };
  }
}
