import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { Session } from '../../src/cli/client/session.js';
import { Receiver } from '../callbacks/receiver.js';

/*
 * call() on an operation that answers success without a body (202, 204) compiled and then failed at run
 * time, as "the service answered no body" with the unavailable exit code, after the service had done the
 * work. The misuse no longer compiles; these assertions fail the type check (`npm run typecheck`) when it
 * would again.
 */

const onHook = { params: { path: { hookId: 'h' } } };

describe('the CLI session', () => {
  const service = new Receiver((call, res) => {
    if (call.method === 'DELETE') res.writeHead(204).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hookId: 'h' }));
  });
  let session: Session;

  beforeAll(async () => {
    await service.listen();
    session = new Session({ url: new URL(service.url).origin, apiKey: 'k' });
  });
  afterAll(() => service.close());

  it('call() takes only calls answering a body, send() only calls answering none', () => {
    // Never called: their types are what the methods' parameters are derived from.
    const calls = () =>
      [
        session.client.DELETE('/api/v1/hooks/{hookId}', onHook),
        session.client.GET('/api/v1/hooks/{hookId}', onHook),
      ] as const;
    expectTypeOf(calls).toBeFunction();
    type Deleted = ReturnType<typeof calls>[0];
    type Read = ReturnType<typeof calls>[1];
    expectTypeOf<Deleted>().not.toExtend<Parameters<typeof session.call<Awaited<Deleted>>>[0]>();
    expectTypeOf<Read>().toExtend<Parameters<typeof session.call<Awaited<Read>>>[0]>();
    expectTypeOf<Read>().not.toExtend<Parameters<typeof session.send<Awaited<Read>>>[0]>();
    expectTypeOf<Deleted>().toExtend<Parameters<typeof session.send<Awaited<Deleted>>>[0]>();
  });

  it('answers the body of a call, and resolves a send on a 204', async () => {
    expect(await session.call(session.client.GET('/api/v1/hooks/{hookId}', onHook))).toEqual({ hookId: 'h' });
    await expect(session.send(session.client.DELETE('/api/v1/hooks/{hookId}', onHook))).resolves.toBeUndefined();
    expect(service.received.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /api/v1/hooks/h',
      'DELETE /api/v1/hooks/h',
    ]);
  });
});
