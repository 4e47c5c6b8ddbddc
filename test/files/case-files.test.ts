import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, execute, initiate, results, startCase, waitForEnd } from '../cases/support.js';
import { Graph, py } from '../support/graphs.js';
import { download, presign, samples, upload } from './support.js';
import { newKey } from '../support/keys.js';

describe('a case with a file input and an array_files input', () => {
  let svc: TestService;
  let workflowId: string;
  beforeAll(async () => {
    svc = await startTestService();
    const g = new Graph();
    const docVar = {
      name: 'doc',
      type: 'file' as const,
      tags: [{ variable_name: 'allowed_file_types', value: ['PDF'] }],
    };
    const input = g.input([docVar, { name: 'attachments', type: 'array_files' }]);
    const code = g.python(
      'Inspect files',
      py(
        [
          'doc = caseflow.read_file(inputs["doc"])',
          'info = [caseflow.file_info(u) for u in inputs["attachments"]]',
          'names = ",".join(i["name"] for i in info)',
          'summary = f"doc={len(doc)} head={doc[:5].decode()} attachments={names}"',
          'return {"summary": summary, "report": caseflow.make_file("report.txt", summary, "text/plain")}',
        ].join('\n'),
      ),
      [docVar, { name: 'attachments', type: 'array_files' }],
      [{ name: 'summary' }, { name: 'report', type: 'file' }],
    );
    const output = g.output([{ name: 'summary' }, { name: 'report', type: 'file' }]);
    g.edge(input, code);
    g.edge(code, output);
    workflowId = (await createWorkflow(svc, g, 'file inputs')).workflowId;
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const uploaded = async (extension: string, body: Record<string, unknown> = {}, key?: string) => {
    const p = await presign(svc, { fileExtension: extension, ...body }, key);
    expect((await upload(p.presignedUrl, samples[extension] as Buffer)).status).toBe(200);
    return p.fileUrl;
  };

  it('reads the inputs in Python and returns a downloadable output file', async () => {
    const doc = await uploaded('.pdf', { originalName: 'contract.pdf' });
    const attachments = [
      await uploaded('.csv', { originalName: 'rows.csv' }),
      await uploaded('.png', { originalName: 'logo.png' }),
    ];
    const caseId = await startCase(svc, workflowId, { doc, attachments });
    const status = await waitForEnd(svc, caseId);
    expect(status.status, JSON.stringify(status)).toBe('COMPLETED');
    const out = await results(svc, caseId);
    const summary = `doc=${(samples['.pdf'] as Buffer).length} head=%PDF- attachments=rows.csv,logo.png`;
    expect(out.summary?.value).toBe(summary);
    expect(out.report?.type).toBe('file');
    const reportUrl = String(out.report?.value);
    expect(reportUrl).toMatch(/\/api\/v1\/file\/[0-9a-f-]{36}$/);
    const got = await download(svc, svc.url + new URL(reportUrl).pathname);
    expect(got.status).toBe(200);
    expect(got.bytes.toString()).toBe(summary);
    expect(got.headers.get('content-disposition')).toContain('filename="report.txt"');
  });

  it('refuses file inputs of a disallowed type, unknown, unreadable or not yet uploaded', async () => {
    const png = await uploaded('.png');
    const doc = await uploaded('.pdf');
    const bad = async (inputs: Record<string, unknown>) => {
      const caseId = await initiate(svc, { workflowId });
      return execute(svc, caseId, { inputs });
    };
    const wrongType = await bad({ doc: png, attachments: [] });
    expect(wrongType.status).toBe(400);
    expect(wrongType.text).toMatch(/doc/);

    expect((await bad({ doc: `${svc.url}/api/v1/file/${crypto.randomUUID()}`, attachments: [] })).status).toBe(404);
    expect((await bad({ doc: 'https://example.com/x.pdf', attachments: [] })).status).toBe(400);

    const pending = await presign(svc, { fileExtension: '.pdf' });
    expect((await bad({ doc: pending.fileUrl, attachments: [] })).status).toBe(400);

    const other = await newKey(svc, ['file:full']);
    const private_ = await uploaded('.csv', { accessScope: 'user' }, other.key);
    const forbidden = await bad({ doc, attachments: [png, private_] });
    expect(forbidden.status).toBe(403);
    expect(forbidden.text).toMatch(/attachments/);
  });
});
