import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { addKeyToFile, keyFileOf, SecretBox } from '../../src/crypto/secret-box.js';
import { encryptingDataConverter } from '../../src/temporal/data-converter.js';
import { PayloadEncryption } from '../../src/temporal/payload-encryption.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';
import { Receiver } from '../callbacks/receiver.js';
import { createClient } from '../../src/client/index.js';
import { caseStatus, createWorkflow, execute, initiate, waitForEnd } from '../cases/support.js';
import { py, textChain } from '../support/graphs.js';
import { adminToken, answered, http, refused, startTestService, type TestService } from '../support/harness.js';
import { decodedHistoryText, payloadsOf } from '../support/history.js';

type History = temporal.api.history.v1.IHistory;

const uiOrigin = 'http://127.0.0.1:8233';
const marker = `MARKER-${randomUUID()}`;
let svc: TestService;
const receiver = new Receiver();
let callbackUrl = '';
let completedCase = '';
let failedCase = '';

/** A Python node named with the marker that echoes its input, or raises it when it starts with "fail". */
const echo = () =>
  textChain(
    `Echo ${marker}`,
    py(
      'if inputs["text"].startswith("fail"):\n    raise ValueError("refused " + inputs["text"])\nreturn {"text": inputs["text"]}',
    ),
  );

/** The history as Temporal stores it, read by a client without the codec (what the UI or anyone on the port gets). */
async function plainHistory(caseId: string): Promise<History> {
  const { connection, namespace } = svc.service.context.temporal;
  const plain = new Client({ connection, namespace });
  const handle = plain.workflow.getHandle(`case-${caseId}`);
  await handle.result().catch(() => undefined);
  return handle.fetchHistory();
}

const asJson = (payload: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});

beforeAll(async () => {
  svc = await startTestService({ config: { temporal: { uiUrl: `${uiOrigin}/` } } });
  callbackUrl = `http://127.0.0.1:${await receiver.listen()}/hook/${marker}`;
  const wf = await createWorkflow(svc, echo(), 'encrypted');
  completedCase = await initiate(svc, { workflowId: wf.workflowId });
  const executed = await execute(svc, completedCase, { inputs: { text: marker }, callbackUrl });
  expect(executed.status, executed.text).toBe(202);
  // The UI link needs a UI the operator says enforces access: a configured uiUrl alone gives none.
  expect(executed.body.temporalUiUrl).toBeNull();
  failedCase = await initiate(svc, { workflowId: wf.workflowId });
  expect((await execute(svc, failedCase, { inputs: { text: `fail ${marker}` } })).status).toBe(202);
  expect((await waitForEnd(svc, completedCase)).status).toBe('COMPLETED');
  expect((await waitForEnd(svc, failedCase)).status).toBe('FAILED');
});
afterAll(async () => {
  await svc?.stop();
  await receiver.close();
});

describe('case histories in Temporal', () => {
  it('hold no case input, output, graph, callback URL or error message in clear', async () => {
    expect(receiver.received.length).toBeGreaterThan(0);
    expect((await caseStatus(svc, completedCase)).temporalUiUrl).toBeNull();
    for (const caseId of [completedCase, failedCase]) {
      const history = await plainHistory(caseId);
      const raw = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
      expect(raw.includes(marker), `case ${caseId}: the marker is in the stored history`).toBe(false);
      // Every payload but the search attributes (ids, which codecs never see) is sealed.
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      expect(Buffer.from(started?.metadata?.encoding ?? []).toString()).toBe('binary/encrypted');
      // The service reads them all back: the marker is there, sealed.
      const text = await decodedHistoryText(history, svc.service.context.temporal.codec);
      expect(text).toContain(marker);
      if (caseId === completedCase) expect(text).toContain(callbackUrl);
      else expect(text).toContain(`refused fail ${marker}`);
    }
  });

  it('replay on the encrypting worker, recorded (clear) histories included', async () => {
    const dataConverter = encryptingDataConverter(svc.service.context.temporal.codec);
    const dir = path.join(import.meta.dirname, '..', 'nodes', 'histories');
    // turnless-apart.bin replays on no code path by design (test/nodes/replay.test.ts asserts its error).
    const recorded = readdirSync(dir).filter((f) => f.endsWith('.bin') && f !== 'turnless-apart.bin');
    expect(recorded.length).toBeGreaterThan(20);
    for (const file of recorded) {
      const history = temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file)));
      await expect(
        Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath }, dataConverter }, history, file),
      ).resolves.toBeUndefined();
    }
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { codePath: workflowBundlePath }, dataConverter },
        await plainHistory(failedCase),
        'encrypted',
      ),
    ).resolves.toBeUndefined();
  });
});

describe('master key rotation', () => {
  it('a history written before the rotation decodes and replays while the old key is kept, and not once it is dropped', async () => {
    const history = await plainHistory(completedCase);
    const ring = addKeyToFile(keyFileOf(svc.config));
    const [current, old] = ring;
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect(Buffer.from(started?.metadata?.['encryption-key-id'] ?? []).toString()).toBe(old?.id);

    const rotated = new PayloadEncryption(new SecretBox(ring));
    expect(await decodedHistoryText(history, rotated)).toContain(marker);
    const [sealed] = await rotated.encode([{ metadata: {}, data: Buffer.from(marker) }]);
    expect(Buffer.from(sealed?.metadata?.['encryption-key-id'] ?? []).toString()).toBe(current?.id);
    const replay = (codec: PayloadEncryption) =>
      Worker.runReplayHistory(
        { workflowBundle: { codePath: workflowBundlePath }, dataConverter: encryptingDataConverter(codec) },
        history,
        `rotated-${randomUUID()}`,
      );
    await expect(replay(rotated)).resolves.toBeUndefined();

    const oldDropped = new PayloadEncryption(new SecretBox(ring.slice(0, 1)));
    await expect(oldDropped.decode(payloadsOf(history))).rejects.toThrow(/no master key with id/);
    // The workflow task fails, naming the missing key: the run waits until the key is back.
    await expect(replay(oldDropped)).rejects.toThrow(/no master key with id/);
  });
});

describe('the codec endpoint (operators)', () => {
  const endpoint = (op: string) => `${svc.url}/admin/temporal-codec/${op}`;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  type Payloads = Array<{ metadata?: Record<string, string>; data?: string }>;
  /** The operator's typed call; the refusals below stay raw (a tenant key or no credential, an unknown namespace). */
  const codec = (op: 'decode' | 'encode', payloads: Payloads, namespace?: 'default') =>
    createClient({ baseUrl: svc.url }).POST(`/admin/temporal-codec/${op}`, {
      params: { header: { ...bearer(adminToken), ...(namespace ? { 'x-namespace': namespace } : {}) } },
      body: { payloads },
    });

  it('decodes for the admin token and refuses a tenant key and no credential', async () => {
    const history = await plainHistory(completedCase);
    const sealed = payloadsOf(history).filter(
      (p) => Buffer.from(p.metadata?.encoding ?? []).toString() === 'binary/encrypted',
    );
    const body = { payloads: sealed.map(asJson) };
    const { payloads } = await answered(codec('decode', body.payloads, 'default'), 200);
    expect(payloads).toHaveLength(sealed.length);
    expect(payloads.map((p) => Buffer.from(p.data ?? '', 'base64').toString()).join('\n')).toContain(marker);
    expect(Buffer.from(payloads[0]?.metadata?.encoding ?? '', 'base64').toString()).toBe('json/plain');

    for (const answer of [
      await http(endpoint('decode'), 'POST', { body, key: svc.key }),
      await http(endpoint('decode'), 'POST', { body, headers: bearer(svc.key) }),
      await http(endpoint('decode'), 'POST', { body }),
      await http(endpoint('encode'), 'POST', { body, key: svc.key }),
    ]) {
      expect(answer.status, answer.text).toBe(401);
      expect(answer.text).not.toContain(marker);
    }
  });

  it('encodes what it decodes, passes clear payloads through, refuses what it cannot open', async () => {
    const clear = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: 'eyJhIjoxfQ==' };
    const [sealed] = (await answered(codec('encode', [clear]), 200)).payloads;
    if (!sealed) throw new Error('encode answered no payload');
    expect(sealed.data).not.toBe(clear.data);
    expect((await answered(codec('decode', [sealed, clear]), 200)).payloads).toEqual([clear, clear]);

    const tampered = { ...sealed, data: Buffer.from('not what was sealed, long enough for a tag').toString('base64') };
    expect((await refused(codec('decode', [tampered]), 400)).message).toMatch(/failed authentication/);
    const otherNamespace = await http(endpoint('decode'), 'POST', {
      body: { payloads: [clear] },
      headers: { ...bearer(adminToken), 'x-namespace': 'someone-else' },
    });
    expect(otherNamespace.status).toBe(400);
    const malformed = await http(endpoint('decode'), 'POST', {
      body: { payloads: [{ data: 'not base64!' }] },
      headers: bearer(adminToken),
    });
    expect(malformed.status).toBe(400);
  });

  it('answers CORS for the configured UI origin only, with credentials', async () => {
    const preflight = (origin: string) =>
      fetch(endpoint('decode'), {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type,x-namespace',
        },
      });
    const ok = await preflight(uiOrigin);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
    expect(ok.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const other = await preflight('https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    // A refusal carries the headers too, so the UI can tell the operator why.
    const unauthenticated = await http(endpoint('decode'), 'POST', {
      body: { payloads: [] },
      headers: { origin: uiOrigin },
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-allow-origin')).toBe(uiOrigin);
  });
});

describe('the Temporal UI link in tenant answers', () => {
  it('is configured only together with the URL of a UI that enforces access', () => {
    expect(loadConfig({}).temporal.tenantsMayUseUi).toBe(false);
    expect(() => loadConfig({ CASEFLOW_TENANTS_MAY_USE_TEMPORAL_UI: 'true' })).toThrow(/TEMPORAL_UI_URL/);
    const config = loadConfig({ CASEFLOW_TENANTS_MAY_USE_TEMPORAL_UI: 'true', TEMPORAL_UI_URL: 'https://ui.test' });
    expect(config.temporal.tenantsMayUseUi).toBe(true);
  });
});
