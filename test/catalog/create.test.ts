import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integrationCreatedResponse } from '../../src/api/schemas/catalog.js';
import { answered, refused, startTestService, type TestService } from '../support/harness.js';
import { clientFor } from '../support/keys.js';
import {
  action,
  createIntegration,
  created,
  credential,
  expectError,
  expectRollbackHalfWay,
  failedFields,
  field,
  integration,
  newAuthor,
  pngIcon,
  svgIcon,
  type Author,
} from './support.js';

describe('POST /api/v1/integration', () => {
  let svc: TestService;
  let author: Author;
  beforeAll(async () => {
    svc = await startTestService();
    author = await newAuthor(svc);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('creates an integration with its actions and credential and answers every required field', async () => {
    const body = await created(svc, author, {
      description: 'Echoes text',
      isBeta: true,
      isNew: true,
      actions: [action(), action({ name: 'Second', code: undefined })],
      credential: credential(),
    });
    expect(Object.keys(body).sort()).toEqual(
      [
        'id',
        'versionId',
        'name',
        'description',
        'icon',
        'category',
        'requiredPlan',
        'status',
        'providerId',
        'isNew',
        'isPopular',
        'createdActions',
        'createdCredential',
      ].sort(),
    );
    expect(body).toMatchObject({
      name: 'Echo service',
      description: 'Echoes text',
      icon: svgIcon,
      category: ['utilities'],
      requiredPlan: 'core',
      status: 'active',
      providerId: author.providerId,
      isNew: true,
      isPopular: false,
    });
    expect(body).not.toHaveProperty('isBeta');
    expect(integrationCreatedResponse.safeParse(body).success).toBe(true);
    expect(body.id).not.toBe(body.versionId);
    expect(body.createdActions.map((a) => a.name)).toEqual(['Echo', 'Second']);
    for (const a of body.createdActions) expect(a.actionId).not.toBe(a.actionVersionId);
    expect(body.createdCredential).toMatchObject({ name: 'API key' });
  });

  it('answers createdCredential null and an empty createdActions when none were sent', async () => {
    const body = await created(svc, author, {
      actions: undefined,
      requiredPlan: 'scale',
      status: 'soon',
      icon: pngIcon,
    });
    expect(body.createdCredential).toBeNull();
    expect(body.createdActions).toEqual([]);
    expect(body).toMatchObject({ requiredPlan: 'scale', status: 'soon', description: null });
  });

  it.each([
    ['no integration object', null, 'body.integration'],
    ['a missing name', { name: undefined }, 'body.integration.name'],
    ['a name over 255 characters', { name: 'n'.repeat(256) }, 'body.integration.name'],
    ['a description over 2048 characters', { description: 'd'.repeat(2049) }, 'body.integration.description'],
    ['a missing icon', { icon: undefined }, 'body.integration.icon'],
    ['an icon over 65535 characters', { icon: 'A'.repeat(65536) }, 'body.integration.icon'],
    ['no category', { category: [] }, 'body.integration.category'],
    ['six categories', { category: ['a', 'b', 'c', 'd', 'e', 'f'] }, 'body.integration.category'],
    ['a missing providerId', { providerId: undefined }, 'body.integration.providerId'],
    ['an unknown requiredPlan', { requiredPlan: 'gold' }, 'body.integration.requiredPlan'],
    ['an unknown status', { status: 'retired' }, 'body.integration.status'],
    ['a non-boolean isNew', { isNew: 'yes' }, 'body.integration.isNew'],
    [
      '51 actions',
      { actions: Array.from({ length: 51 }, () => action({ code: undefined })) },
      'body.integration.actions',
    ],
    [
      'an action without endpoint',
      { actions: [action({ endpoint: undefined })] },
      'body.integration.actions.0.endpoint',
    ],
    [
      'an action endpoint over 2048',
      { actions: [action({ endpoint: `https://x/${'e'.repeat(2048)}` })] },
      'body.integration.actions.0.endpoint',
    ],
    ['an action name over 255', { actions: [action({ name: 'a'.repeat(256) })] }, 'body.integration.actions.0.name'],
    [
      'action code over 65535',
      { actions: [action({ code: `# ${'c'.repeat(65535)}` })] },
      'body.integration.actions.0.code',
    ],
    ['an action without outputs', { actions: [action({ outputs: undefined })] }, 'body.integration.actions.0.outputs'],
    [
      'a field whose key is not its variableName',
      { actions: [action({ inputs: { text: field('other') } })] },
      'body.integration.actions.0.inputs.text.variableName',
    ],
    [
      'a field id that is not a 1-indexed position',
      { actions: [action({ inputs: { text: field('text', ['str'], { id: 'first' }) } })] },
      'body.integration.actions.0.inputs.text.id',
    ],
    [
      'a field id of 0',
      { actions: [action({ outputs: { echo: field('echo', ['str'], { id: '0' }) } })] },
      'body.integration.actions.0.outputs.echo.id',
    ],
    [
      'a field with no allowedTypes',
      { actions: [action({ inputs: { text: field('text', []) } })] },
      'body.integration.actions.0.inputs.text.allowedTypes',
    ],
    [
      'a field with 12 allowedTypes',
      {
        actions: [
          action({
            inputs: { text: { ...field('text'), allowedTypes: Array.from({ length: 12 }, () => ({ type: 'str' })) } },
          }),
        ],
      },
      'body.integration.actions.0.inputs.text.allowedTypes',
    ],
    [
      'an unknown allowed type',
      { actions: [{ ...action(), inputs: { text: { ...field('text'), allowedTypes: [{ type: 'blob' }] } } }] },
      'allowedTypes.0.type',
    ],
    [
      '21 tags',
      {
        actions: [
          action({ inputs: { text: field('text', ['str'], { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }) } }),
        ],
      },
      'inputs.text.tags',
    ],
    [
      '21 options',
      {
        actions: [
          action({
            inputs: { text: field('text', ['str'], { options: Array.from({ length: 21 }, (_, i) => ({ v: i })) }) },
          }),
        ],
      },
      'inputs.text.options',
    ],
    [
      '21 nonEditableFields',
      {
        actions: [
          action({
            inputs: { text: field('text', ['str'], { nonEditableFields: Array.from({ length: 21 }, () => 'id') }) },
          }),
        ],
      },
      'inputs.text.nonEditableFields',
    ],
    [
      'a default of none of the allowed types',
      { actions: [action({ inputs: { text: field('text', ['int', 'bool'], { default: 'x' }) } })] },
      'inputs.text.default',
    ],
    [
      'a typeDefinition map of 51 entries',
      {
        actions: [
          action({
            inputs: {
              text: {
                ...field('text'),
                allowedTypes: [
                  {
                    type: 'object',
                    typeDefinition: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, field(`p${i}`)])),
                  },
                ],
              },
            },
          }),
        ],
      },
      'inputs.text.allowedTypes.0.typeDefinition',
    ],
    [
      'a typeDefinition map of 51 entries two levels down (an array of objects)',
      {
        actions: [
          action({
            outputs: {
              rows: {
                ...field('rows'),
                allowedTypes: [
                  {
                    type: 'array',
                    typeDefinition: {
                      row: {
                        ...field('row'),
                        allowedTypes: [
                          {
                            type: 'object',
                            typeDefinition: Object.fromEntries(
                              Array.from({ length: 51 }, (_, i) => [`p${i}`, field(`p${i}`)]),
                            ),
                          },
                        ],
                      },
                    },
                  },
                ],
              },
            },
          }),
        ],
      },
      'outputs.rows.allowedTypes.0.typeDefinition.row.allowedTypes.0.typeDefinition',
    ],
    [
      // Dropped as an unknown key before, the action was saved (201) without its shape or its limit.
      'a typeDefinition of 51 entries on the field instead of in an allowedTypes entry',
      {
        actions: [
          action({
            inputs: {
              text: {
                ...field('text', ['object']),
                typeDefinition: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, field(`p${i}`)])),
              },
            },
          }),
        ],
      },
      'body.integration.actions.0.inputs.text.typeDefinition',
    ],
    [
      'a typeDefinition on a scalar',
      {
        actions: [
          action({
            inputs: { text: { ...field('text'), allowedTypes: [{ type: 'str', typeDefinition: { a: field('a') } }] } },
          }),
        ],
      },
      'typeDefinition',
    ],
    [
      'a credential without inputs',
      { credential: credential({ inputs: undefined }) },
      'body.integration.credential.inputs',
    ],
    [
      'a credential with an unknown authType',
      { credential: { ...credential(), authType: 'password' } },
      'body.integration.credential.authType',
    ],
  ])('refuses %s with 400', async (_label, overrides, fieldPath) => {
    const body = overrides === null ? {} : undefined;
    const res = body
      ? await svc.request('POST', '/api/v1/integration', { body, key: author.key })
      : await createIntegration(svc, author, overrides as Record<string, unknown>);
    expectError(res, 400);
    expect(
      failedFields(res).some((f) => f.includes(fieldPath)),
      JSON.stringify(failedFields(res)),
    ).toBe(true);
  });

  it('accepts the limits themselves: 5 categories, 50 actions, 11 allowedTypes, 20 tags, a nested typeDefinition of 50 entries', async () => {
    const nested = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${i}`, field(`p${i}`)]));
    const wide = {
      ...field('text', ['str'], { tags: Array.from({ length: 20 }, (_, i) => `t${i}`), default: 'hello' }),
      allowedTypes: [
        {
          type: 'array' as const,
          typeDefinition: {
            item: { ...field('item'), allowedTypes: [{ type: 'object' as const, typeDefinition: nested }] },
          },
        },
        ...(['int', 'float', 'bool', 'str', 'object', 'file', 'date', 'binary', 'json_string', 'node'] as const).map(
          (type) => ({ type }),
        ),
      ],
    };
    const actions = [
      action({ inputs: { text: wide } }),
      ...Array.from({ length: 49 }, (_, i) => action({ name: `a${i}`, code: undefined })),
    ];
    const body = await created(svc, author, {
      category: ['a', 'b', 'c', 'd', 'e'],
      actions,
      name: 'n'.repeat(255),
    });
    expect(body.createdActions).toHaveLength(50);
  });

  it.each([
    ['a data: prefix', `data:image/png;base64,${pngIcon}`, 'data: prefix'],
    ['text that is not base64', 'not base64 at all!', 'not valid base64'],
    ['base64 of neither PNG nor SVG', Buffer.from('GIF89a not an icon').toString('base64'), 'neither a PNG nor an SVG'],
    [
      'an SVG with a script',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>').toString('base64'),
      'scripts',
    ],
    ['a JPEG', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]).toString('base64'), 'neither a PNG nor an SVG'],
  ])('refuses an icon with %s', async (_label, icon, message) => {
    expectError(await createIntegration(svc, author, { icon }), 400, message);
    expectError(await createIntegration(svc, author, { credential: credential({ icon }) }), 400, message);
  });

  it('refuses action code the scanner refuses, with the violations, and leaves nothing behind', async () => {
    const name = `scan-refused-${Date.now()}`;
    const bad = action({ name: 'Bad', code: "import subprocess\nresult['echo'] = subprocess.run(['id'])\n" });
    const res = await createIntegration(svc, author, { name, actions: [action(), bad], credential: credential() });
    expectError(res, 400, 'integration.actions.1.code');
    const violations = (res.body.metadata as { violations: Array<{ line: number; message: string }> }).violations;
    expect(violations[0]?.line).toBe(1);
    expect(violations[0]?.message).toContain('subprocess');
    const list = await answered(clientFor(svc, author.key).GET('/api/v1/integration'), 200);
    expect(list.integrations.map((i) => i.name)).not.toContain(name);
    const rows = await svc.service.context.store.db
      .selectFrom('integration_versions')
      .select('id')
      .where('name', '=', name)
      .execute();
    expect(rows).toEqual([]);
  });

  it('refuses a body nested too deep with 400 instead of overflowing the stack', async () => {
    const depth = 200_000;
    const deep = '['.repeat(depth) + ']'.repeat(depth);
    for (const extra of [{ default: '__DEEP__' }, { options: [{ a: '__DEEP__' }] }]) {
      const body = JSON.stringify({
        integration: integration(author.providerId, {
          actions: [action({ inputs: { text: field('text', ['array'], extra) } })],
        }),
      });
      const rawBody = body.replace('"__DEEP__"', deep);
      for (const headers of [{}, { 'Idempotency-Key': crypto.randomUUID() }] as Array<Record<string, string>>) {
        const res = await svc.request('POST', '/api/v1/integration', {
          rawBody,
          headers: { 'content-type': 'application/json', ...headers },
          key: author.key,
        });
        expectError(res, 400, 'nests deeper than');
      }
    }
  });

  it('accepts typeDefinition nested to its 10-level limit', async () => {
    let inner = field('leaf');
    for (let level = 0; level < 10; level++)
      inner = {
        ...field(`l${level}`),
        allowedTypes: [{ type: 'object', typeDefinition: { [inner.variableName]: inner } }],
      };
    await created(svc, author, { actions: [action({ inputs: { text: { ...inner, variableName: 'text' } } })] });
  });

  it('rolls back the whole creation when a write fails half-way', async () => {
    await expectRollbackHalfWay(svc, await newAuthor(svc));
  });

  it("wants a provider of the caller's organization: unknown 422, another organization's 403", async () => {
    expectError(await createIntegration(svc, author, { providerId: crypto.randomUUID() }), 422, 'does not exist');
    const other = await newAuthor(svc);
    expectError(await createIntegration(svc, author, { providerId: other.providerId }), 403, 'another organization');
  });

  it('takes the organization from the key only', async () => {
    const other = await newAuthor(svc);
    // organizationId is no field of the body: sent untyped.
    const mine = await createIntegration(svc, author, { organizationId: other.organizationId });
    expect(mine.status, mine.text).toBe(201);
    const theirs = await refused(
      clientFor(svc, other.key).GET('/api/v1/integration/{integrationId}', {
        params: { path: { integrationId: String(mine.body.id) } },
      }),
      404,
    );
    expect(theirs.statusCode).toBe(404);
  });

  it('creates and lists providers per organization', async () => {
    const other = await newAuthor(svc);
    const mine = await answered(clientFor(svc, author.key).GET('/api/v1/provider'), 200);
    const ids = mine.providers.map((p) => p.id);
    expect(ids).toContain(author.providerId);
    expect(ids).not.toContain(other.providerId);
    expectError(
      await svc.request('POST', '/api/v1/provider', { body: { name: '' }, key: author.key }),
      400,
      'body.name',
    );
  });
});
