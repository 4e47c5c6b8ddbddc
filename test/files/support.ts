import { readdirSync } from 'node:fs';
import path from 'node:path';
import { createClient, type paths } from '../../src/client/index.js';
import { answered, type TestResponse, type TestService } from '../support/harness.js';

/** Real leading bytes of each supported type, padded so each file is more than its magic number. */
const pad = Buffer.from(' caseflow test file body '.repeat(4));
export const samples: Record<string, Buffer> = {
  '.pdf': Buffer.concat([
    Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n', 'latin1'),
    pad,
    Buffer.from('\n%%EOF\n'),
  ]),
  '.png': Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
    Buffer.from('IHDR'),
    pad,
  ]),
  '.jpeg': Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), pad]),
  '.jpg': Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe1, 0x00, 0x10]), Buffer.from('Exif\0'), pad]),
  '.docx': Buffer.concat([
    Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00]),
    Buffer.from('[Content_Types].xml word/document.xml'),
    pad,
  ]),
  '.xlsx': Buffer.concat([
    Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00]),
    Buffer.from('[Content_Types].xml xl/workbook.xml'),
    pad,
  ]),
  '.xls': Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]), pad]),
  '.csv': Buffer.from('name,amount\nÅsa,12.5\nBob,7\n'),
  '.txt': Buffer.from('plain text – with UTF-8 ✓\n'),
  '.json': Buffer.from('{"invoice": 42, "items": [1, 2, 3], "note": "ünïcode"}'),
  '.html': Buffer.from('<!doctype html><html><body><script>alert(1)</script></body></html>'),
  '.xml': Buffer.from('<?xml version="1.0" encoding="UTF-8"?><root><a>1</a></root>'),
};

export const expectedContentTypes: Record<string, RegExp> = {
  '.pdf': /^application\/pdf$/,
  '.png': /^image\/png$/,
  '.jpeg': /^image\/jpeg$/,
  '.jpg': /^image\/jpeg$/,
  '.docx': /^application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document$/,
  '.xlsx': /^application\/vnd\.openxmlformats-officedocument\.spreadsheetml\.sheet$/,
  '.xls': /^application\/vnd\.ms-excel$/,
  '.csv': /^text\/csv; charset=utf-8$/,
  '.txt': /^text\/plain; charset=utf-8$/,
  '.json': /^application\/json; charset=utf-8$/,
  '.html': /^text\/html; charset=utf-8$/,
  '.xml': /^application\/xml; charset=utf-8$/,
};

type PresignPath = '/api/v1/file/upload/presigned' | '/job/file/upload';
export type PresignBody = paths['/api/v1/file/upload/presigned']['post']['requestBody']['content']['application/json'];
export type Presigned = paths['/api/v1/file/upload/presigned']['post']['responses'][201]['content']['application/json'];

/** Asks for an upload URL as the key given (the service's own by default), through the typed client. */
export function presignCall(
  svc: TestService,
  body: PresignBody,
  key?: string,
  path: PresignPath = '/api/v1/file/upload/presigned',
) {
  const client = key === undefined ? svc.client : createClient({ baseUrl: svc.url, key });
  return client.POST(path, { body });
}

/** An upload URL (201). */
export async function presign(...args: Parameters<typeof presignCall>): Promise<Presigned> {
  return answered(presignCall(...args), 201);
}

/** PUTs raw bytes to a presigned URL the way any HTTP client would: no API key. */
export async function upload(
  url: string,
  bytes: Buffer | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  const init: RequestInit & { duplex?: 'half' } = { method: 'PUT', body: bytes, headers };
  if (!(bytes instanceof Buffer)) init.duplex = 'half';
  const response = await fetch(url, init);
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = {};
  }
  return { status: response.status, headers: response.headers, body, text };
}

/** GETs a fileUrl with a key (the test service's own key by default). */
export async function download(
  svc: TestService,
  fileUrl: string,
  key?: string | null,
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const headers: Record<string, string> = {};
  const k = key === undefined ? svc.key : key;
  if (k) headers['x-service-key'] = k;
  const response = await fetch(fileUrl, { headers });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Every file under the service's file store (objects and temporary uploads). */
export function storedFiles(svc: TestService): string[] {
  const root = path.join(svc.dataDir, 'files');
  try {
    return readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name));
  } catch {
    return [];
  }
}
