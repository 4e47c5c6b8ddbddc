import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { startTestService, type TestService } from '../support/harness.js';
import { Graph, py, vars } from '../support/graphs.js';
import { audit, createWorkflow, initiate, startCase, waitForEnd } from '../cases/support.js';
import { presign, upload } from './support.js';
import { newCaller } from '../support/keys.js';

const marker = `A-PRIVATE-${randomUUID()}`;
const readDoc = py('return {"out": caseflow.read_file(inputs["doc"]).decode()}');

/** POST with a Host header of the attacker's choosing (fetch does not let a caller set Host). */
function postWithHost(
  url: string,
  host: string,
  key: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: { host, 'x-forwarded-host': host, 'x-service-key': key, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('organization B cannot read organization A files through a case', () => {
  let svc: TestService;
  let aFile: string;
  /** The service as organization B sees it: B's key and workspace. */
  let asB: TestService;

  beforeAll(async () => {
    svc = await startTestService();
    const p = await presign(svc, { fileExtension: '.txt', accessScope: 'organization' });
    expect((await upload(p.presignedUrl, Buffer.from(marker))).status).toBe(200);
    aFile = p.fileUrl;
    const b = await newCaller(svc, ['workflow:full', 'case:full', 'file:full', 'code:full']);
    asB = { ...svc, key: b.key, workspaceId: b.workspaceId, client: createClient({ baseUrl: svc.url, key: b.key }) };
  });
  afterAll(async () => {
    await svc?.stop();
  });

  /** Runs B's workflow to its end; the case's status, results and audit as one text. */
  async function runAsB(
    g: Graph,
    inputs: Record<string, unknown> = {},
  ): Promise<{ status: string; everything: string }> {
    const { workflowId } = await createWorkflow(asB, g, 'steal');
    const caseId = await startCase(asB, workflowId, inputs);
    const status = await waitForEnd(asB, caseId);
    // A failed case answers its results with an error body: both count.
    const results = await asB.client.GET('/api/v1/case/{caseId}/results', { params: { path: { caseId } } });
    const everything = [status, results.data ?? results.error, await audit(asB, caseId)].map((x) => JSON.stringify(x));
    return { status: status.status, everything: everything.join('') };
  }

  const expectRefused = (run: { status: string; everything: string }) => {
    expect(run.status).toBe('FAILED');
    expect(run.everything).toMatch(/File not accessible/);
    expect(run.everything).not.toContain(marker);
  };

  it('refuses A’s file given as a fixed value', async () => {
    const g = new Graph();
    const input = g.input([]);
    const doc = vars([{ name: 'doc', type: 'file' }]);
    const docId = Object.keys(doc.schema)[0] as string;
    const code = g.node({
      name: 'Read',
      type: 'code',
      handler_class: 'python_code',
      process: { source: readDoc },
      input_schema: doc,
      output_schema: vars([{ name: 'out' }]),
      fixed_values: { [docId]: aFile },
    });
    g.edge(input, code);
    g.edge(code, g.output([{ name: 'out' }]));
    expectRefused(await runAsB(g));
  });

  it('refuses A’s file given as an input-schema default', async () => {
    const g = new Graph();
    const schema = vars([{ name: 'doc', type: 'file', optional: true }]);
    for (const entry of Object.values(schema.schema)) entry.default = aFile;
    const input = g.node({ name: 'Workflow Input', type: 'input', output_schema: schema });
    const code = g.python('Read', readDoc, [{ name: 'doc', type: 'file' }], [{ name: 'out' }]);
    g.edge(input, code);
    g.edge(code, g.output([{ name: 'out' }]));
    expectRefused(await runAsB(g));
  });

  it('refuses A’s file handed on as an upstream node output', async () => {
    const g = new Graph();
    const input = g.input([]);
    const make = g.python('Name it', py(`return {"doc": ${JSON.stringify(aFile)}}`), [], [{ name: 'doc' }]);
    const code = g.python('Read', readDoc, [{ name: 'doc', type: 'file' }], [{ name: 'out' }]);
    g.edge(input, make);
    g.edge(make, code);
    g.edge(code, g.output([{ name: 'out' }]));
    expectRefused(await runAsB(g));
  });

  it('refuses A’s file in the execute inputs with 403, before anything runs', async () => {
    const g = new Graph();
    const input = g.input([{ name: 'doc', type: 'file' }]);
    const code = g.python('Read', readDoc, [{ name: 'doc', type: 'file' }], [{ name: 'out' }]);
    g.edge(input, code);
    g.edge(code, g.output([{ name: 'out' }]));
    const { workflowId } = await createWorkflow(asB, g, 'steal');
    const caseId = await initiate(asB, { workflowId });
    const exec = await asB.client.POST('/api/v1/case/{caseId}/execute', {
      params: { path: { caseId } },
      body: { inputs: { doc: aFile } },
    });
    expect(exec.response.status).toBe(403);
    expect(JSON.stringify(exec.error)).not.toContain(marker);
  });
});

describe('file URLs: canonical only, never from the Host header', () => {
  let svc: TestService;
  let workflowId: string;
  let fileUrl: string;
  beforeAll(async () => {
    svc = await startTestService();
    const p = await presign(svc, { fileExtension: '.txt', accessScope: 'organization' });
    expect((await upload(p.presignedUrl, Buffer.from('hello'))).status).toBe(200);
    fileUrl = p.fileUrl;
    const g = new Graph();
    const input = g.input([{ name: 'doc', type: 'file' }]);
    const code = g.python('Read', readDoc, [{ name: 'doc', type: 'file' }], [{ name: 'out' }]);
    g.edge(input, code);
    g.edge(code, g.output([{ name: 'out' }]));
    ({ workflowId } = await createWorkflow(svc, g, 'canon'));
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers 400 at execute for another origin, an extra query or fragment, or another spelling', async () => {
    const { port } = new URL(svc.url);
    const variants = [
      fileUrl.replace(svc.url, `http://localhost:${port}`),
      fileUrl.replace(svc.url, 'https://evil.example'),
      `${fileUrl}?download=1`,
      `${fileUrl}#x`,
      fileUrl.toUpperCase(),
      `${fileUrl}/`,
    ];
    const execute = async (doc: string) => {
      const caseId = await initiate(svc, { workflowId });
      return svc.client.POST('/api/v1/case/{caseId}/execute', {
        params: { path: { caseId } },
        body: { inputs: { doc } },
      });
    };
    for (const doc of variants) {
      const exec = await execute(doc);
      expect(exec.response.status, doc).toBe(400);
      expect(JSON.stringify(exec.error)).toMatch(/not a file URL of this service/);
    }
    expect((await execute(fileUrl)).response.status).toBe(202);
  });

  it('presigned and file URLs ignore a spoofed Host header', async () => {
    const res = await postWithHost(`${svc.url}/api/v1/file/upload/presigned`, 'evil.example', svc.key, {
      fileExtension: '.txt',
      accessScope: 'organization',
    });
    expect(res.status).toBe(201);
    expect(String(res.body.presignedUrl).startsWith(`${svc.url}/api/v1/file/upload/`)).toBe(true);
    expect(res.body.fileUrl).toBe(`${svc.url}/api/v1/file/${String(res.body.fileId)}`);
  });
});

describe('per-case file limits', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ config: { files: { maxReadsPerCase: 2, maxReadBytesPerCase: 1000 } } });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const uploaded = async (bytes: Buffer) => {
    const p = await presign(svc, { fileExtension: '.txt', accessScope: 'organization' });
    expect((await upload(p.presignedUrl, bytes)).status).toBe(200);
    return p.fileUrl;
  };

  async function run(docs: string[]) {
    const g = new Graph();
    const input = g.input([{ name: 'docs', type: 'array_files' }]);
    const code = g.python(
      'Read all',
      py('return {"n": sum(len(caseflow.read_file(u)) for u in inputs["docs"])}'),
      [{ name: 'docs', type: 'array_files' }],
      [{ name: 'n', type: 'int' }],
    );
    g.edge(input, code);
    g.edge(code, g.output([{ name: 'n', type: 'int' }]));
    const { workflowId } = await createWorkflow(svc, g, 'limits');
    return waitForEnd(svc, await startCase(svc, workflowId, { docs }));
  }

  it('allows reads within the limits', async () => {
    const small = await uploaded(Buffer.alloc(100, 'a'));
    expect((await run([small, small])).status).toBe('COMPLETED');
  });

  it('fails the node past the number of reads', async () => {
    const small = await uploaded(Buffer.alloc(10, 'a'));
    const end = await run([small, small, small]);
    expect(end.status).toBe('FAILED');
    expect(JSON.stringify(end.error)).toMatch(/File limit of this case reached/);
  });

  it('fails the node past the bytes', async () => {
    const big = await uploaded(Buffer.alloc(600, 'a'));
    const end = await run([big, big]);
    expect(end.status).toBe('FAILED');
    expect(JSON.stringify(end.error)).toMatch(/File limit of this case reached/);
  });
});
