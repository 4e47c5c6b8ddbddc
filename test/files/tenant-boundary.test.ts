import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startTestService, type TestService } from '../support/harness.js';
import { Graph, py, vars } from '../support/graphs.js';
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
  let b: { key: string; workspaceId: string };

  beforeAll(async () => {
    svc = await startTestService();
    const p = await presign(svc, { fileExtension: '.txt', accessScope: 'organization' });
    expect((await upload(p.presignedUrl, Buffer.from(marker))).status).toBe(200);
    aFile = p.fileUrl;
    b = await newCaller(svc, ['workflow:full', 'case:full', 'file:full', 'code:full']);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const asB = (method: string, path: string, body?: unknown) =>
    http(svc.url + path, method, { key: b.key, body, headers: { 'x-workspace-id': b.workspaceId } });

  /** Runs B's workflow to its end; the case's status, results and audit as one text. */
  async function runAsB(
    g: Graph,
    inputs: Record<string, unknown> = {},
  ): Promise<{ status: string; everything: string }> {
    const wf = await asB('POST', '/api/v1/workflow', {
      name: 'steal',
      activeStatus: 'active',
      nodes: g.nodes,
      edges: g.edges,
    });
    expect(wf.status, wf.text).toBe(201);
    const created = await asB('POST', '/api/v1/case', { workflowId: wf.body.workflowId });
    expect(created.status, created.text).toBe(201);
    const caseId = String(created.body.caseId);
    const exec = await asB('POST', `/api/v1/case/${caseId}/execute`, { inputs });
    expect(exec.status, exec.text).toBe(202);
    for (const until = Date.now() + 45_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      const status = await asB('GET', `/api/v1/case/${caseId}/status`);
      if (['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(String(status.body.status))) {
        const results = await asB('GET', `/api/v1/case/${caseId}/results`);
        const auditText = (await asB('GET', `/api/v1/case/${caseId}/audit`)).text;
        return { status: String(status.body.status), everything: status.text + results.text + auditText };
      }
    }
    throw new Error(`case ${caseId} did not end`);
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
    const wf = await asB('POST', '/api/v1/workflow', {
      name: 'steal',
      activeStatus: 'active',
      nodes: g.nodes,
      edges: g.edges,
    });
    const created = await asB('POST', '/api/v1/case', { workflowId: wf.body.workflowId });
    const exec = await asB('POST', `/api/v1/case/${String(created.body.caseId)}/execute`, { inputs: { doc: aFile } });
    expect(exec.status).toBe(403);
    expect(exec.text).not.toContain(marker);
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
    const wf = await svc.request('POST', '/api/v1/workflow', {
      headers: { 'x-workspace-id': svc.workspaceId },
      body: { name: 'canon', activeStatus: 'active', nodes: g.nodes, edges: g.edges },
    });
    workflowId = String(wf.body.workflowId);
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
    for (const doc of variants) {
      const created = await svc.request('POST', '/api/v1/case', { body: { workflowId } });
      const exec = await svc.request('POST', `/api/v1/case/${String(created.body.caseId)}/execute`, {
        body: { inputs: { doc } },
      });
      expect(exec.status, doc).toBe(400);
      expect(exec.text).toMatch(/not a file URL of this service/);
    }
    const created = await svc.request('POST', '/api/v1/case', { body: { workflowId } });
    expect(
      (
        await svc.request('POST', `/api/v1/case/${String(created.body.caseId)}/execute`, {
          body: { inputs: { doc: fileUrl } },
        })
      ).status,
    ).toBe(202);
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

  async function run(docs: string[]): Promise<Record<string, unknown>> {
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
    const wf = await svc.request('POST', '/api/v1/workflow', {
      headers: { 'x-workspace-id': svc.workspaceId },
      body: { name: 'limits', activeStatus: 'active', nodes: g.nodes, edges: g.edges },
    });
    const created = await svc.request('POST', '/api/v1/case', { body: { workflowId: wf.body.workflowId } });
    const caseId = String(created.body.caseId);
    expect((await svc.request('POST', `/api/v1/case/${caseId}/execute`, { body: { inputs: { docs } } })).status).toBe(
      202,
    );
    for (;;) {
      const status = await svc.request('GET', `/api/v1/case/${caseId}/status`);
      if (status.body.status !== 'RUNNING' && status.body.status !== 'PENDING') return status.body;
      await new Promise((r) => setTimeout(r, 50));
    }
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
