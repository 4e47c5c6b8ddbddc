import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { OpenApiBuilder, type OperationSpec } from '../../src/api/openapi.js';

const create: OperationSpec = {
  method: 'post',
  path: '/api/v1/thing',
  summary: 'create a thing',
  tags: ['things'],
  secured: true,
  responses: { 201: { description: 'created', schema: z.object({ thingId: z.string() }) } },
};
const read: OperationSpec = {
  ...create,
  method: 'get',
  path: '/api/v1/thing/{thingId}',
  summary: 'read a thing',
  responses: { 200: { description: 'the thing' } },
};

describe('the OpenAPI builder', () => {
  it('refuses a link to nothing when the link is added (at start), though the document is built later', () => {
    const builder = new OpenApiBuilder();
    builder.add(create);
    builder.add(read);
    expect(() => builder.link([{ from: 'POST /api/v1/thing', status: 201, to: 'GET /api/v1/nothing' }])).toThrow(
      'OpenAPI link names an unknown operation: GET /api/v1/nothing',
    );
    expect(() =>
      builder.link([{ from: 'POST /api/v1/thing', status: 200, to: 'GET /api/v1/thing/{thingId}' }]),
    ).toThrow('OpenAPI link from an undocumented response: POST /api/v1/thing 200');
  });

  it('builds the operations and their links when the document is asked for', () => {
    const builder = new OpenApiBuilder();
    builder.add(create);
    builder.add(read);
    const parameters = { thingId: '$response.body#/thingId' };
    builder.link([{ from: 'POST /api/v1/thing', status: 201, to: 'GET /api/v1/thing/{thingId}', parameters }]);
    expect(builder.document('http://127.0.0.1:8080')).toMatchObject({
      servers: [{ url: 'http://127.0.0.1:8080' }],
      paths: {
        '/api/v1/thing': {
          post: {
            operationId: 'postApiV1Thing',
            responses: {
              201: { links: { getApiV1ThingThingId: { operationId: 'getApiV1ThingThingId', parameters } } },
            },
          },
        },
        '/api/v1/thing/{thingId}': { get: { operationId: 'getApiV1ThingThingId' } },
      },
    });
  });
});
