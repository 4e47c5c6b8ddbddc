import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { FileService, PresignResult } from '../files/file-service.js';
import { maxFileBytes, supportedExtensionPattern, supportedExtensions } from '../files/file-types.js';
import { accessScopes } from '../domain/file-access.js';
import type { FileRecord } from '../domain/file-records.js';
import { parseOrThrow, type ApiRoutes } from './route.js';
import { uuid, queryInt } from './schemas/common.js';

const presignBody = z.object({
  fileExtension: z
    .string()
    .regex(supportedExtensionPattern, `must be one of ${supportedExtensions.join(', ')} (any letter case)`)
    .meta({ description: `With the leading dot; one of ${supportedExtensions.join(', ')}` }),
  accessScope: z.enum(accessScopes).optional().meta({
    description: 'Omitted: the file is unlisted (tracked, readable in the organization, absent from the library)',
  }),
  originalName: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .optional()
    .meta({ description: 'Name shown in the library and sent as the download file name' }),
  workspaceId: uuid
    .optional()
    .meta({ description: 'Owning workspace; required when accessScope is workspace and workflowId is absent' }),
  workflowId: uuid.optional().meta({
    description:
      "The workflow's workspace owns the file; required when accessScope is workspace and workspaceId is absent",
  }),
});

const presignResponse = z.object({
  presignedUrl: z
    .string()
    .meta({ description: 'Send the bytes here with PUT (raw body, no API key) before expiresAt; works once' }),
  fileUrl: z
    .string()
    .meta({ description: 'Permanent URL: put it in the execute request; GET it with the API key to download' }),
  fileId: z.string(),
  expiresAt: z.string(),
  uploadMethod: z.literal('PUT'),
});

const fileView = z.object({
  fileId: z.string(),
  fileUrl: z.string(),
  originalName: z.string().nullable(),
  fileExtension: z.string(),
  contentType: z.string(),
  sizeBytes: z.number().nullable(),
  accessScope: z.enum(accessScopes),
  workspaceId: z.string().nullable(),
  uploadedBy: z.string().nullable(),
  createdAt: z.string(),
  uploadedAt: z.string().nullable(),
});

const libraryQuery = z.object({
  workspaceId: uuid
    .optional()
    .meta({ description: "Only this workspace's files (plus the organization's `all` files)" }),
  accessScope: z.enum(accessScopes).optional(),
  fileExtension: z
    .string()
    .regex(/^\.[A-Za-z0-9]+$/, 'an extension with its leading dot')
    .optional(),
  limit: queryInt({ min: 1, max: 200 }).default(50),
  offset: queryInt({ min: 0 }).default(0),
});

const fileParams = z.object({ fileId: uuid });
const uploadQuery = z.object({
  expires: queryInt().meta({ description: 'Expiry (Unix seconds), part of the signed URL' }),
  signature: z.string().min(1).meta({ description: 'HMAC signature, part of the signed URL' }),
});

const presignDescription =
  `Records a file and returns a signed, expiring upload URL (PUT the raw bytes there, no API key) and the permanent fileUrl. ` +
  `Bytes are checked against the extension; at most ${maxFileBytes} bytes. Requires File: Full (in the owning workspace when there is one).`;

/** attachment with an ASCII fallback name and the exact UTF-8 name (RFC 6266 / RFC 5987). */
function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}

function presignedView(result: PresignResult): z.infer<typeof presignResponse> {
  return {
    presignedUrl: result.presignedUrl,
    fileUrl: result.fileUrl,
    fileId: result.fileId,
    expiresAt: result.expiresAt,
    uploadMethod: 'PUT',
  };
}

function view(files: FileService, record: FileRecord): z.infer<typeof fileView> {
  return {
    fileId: record.id,
    fileUrl: files.fileUrl(record.id),
    originalName: record.originalName,
    fileExtension: record.extension,
    contentType: record.contentType,
    sizeBytes: record.sizeBytes,
    accessScope: record.accessScope,
    workspaceId: record.workspaceId,
    uploadedBy: record.uploadedBy,
    createdAt: record.createdAt,
    uploadedAt: record.uploadedAt,
  };
}

export function registerFileRoutes(api: ApiRoutes, ctx: AppContext): void {
  const { files } = ctx.services;

  for (const [path, deprecated] of [
    ['/job/file/upload', true],
    ['/api/v1/file/upload/presigned', false],
  ] as const) {
    api.route({
      method: 'post',
      path,
      summary: deprecated ? 'Get a presigned upload URL (job flow)' : 'Get a presigned upload URL',
      description: presignDescription,
      tags: ['Files'],
      deprecated,
      auth: true,
      body: presignBody,
      // File: Full is checked before the body (403 before 400).
      validateBody: false,
      responses: {
        201: { description: 'Upload URL and permanent file URL', schema: presignResponse },
        400: { description: 'Invalid body, unsupported extension, or workspace scope without workspaceId/workflowId' },
        403: { description: 'Lacks File: Full, or no access to the workspace' },
        404: { description: 'Workspace or workflow does not exist' },
      },
      handler: async ({ req, res, auth }) => {
        files.authorizeUpload(auth);
        const body = parseOrThrow(presignBody, req.body ?? {}, 'body');
        res.status(201).json(presignedView(await files.presign(auth, body)));
      },
    });
  }

  api.route({
    method: 'put',
    path: '/api/v1/file/upload/:fileId',
    summary: 'Send the bytes of a file to its presigned URL',
    description:
      'The body is the raw file (any content type; it is ignored). No API key: the signature in the URL is the authority. ' +
      `At most ${maxFileBytes} bytes (413 beyond, checked while streaming); the bytes must match the declared extension (400); ` +
      'a URL works once (409 after a successful upload) and until it expires (403). A failed upload stores nothing and may be retried.',
    tags: ['Files'],
    auth: false,
    params: fileParams,
    query: uploadQuery,
    responses: {
      200: { description: 'Stored', schema: fileView },
      400: { description: 'Bytes do not match the extension, or the upload was interrupted' },
      403: { description: 'Invalid signature or expired URL' },
      409: { description: 'URL already used, or an upload to it is in progress' },
      413: { description: 'More than 10 MB' },
    },
    handler: async ({ req, res, params, query }) => {
      const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
      try {
        const record = await files.receiveUpload(params.fileId, query.expires, query.signature, req, declared);
        res.status(200).json(view(files, record));
      } catch (err) {
        // The rest of a rejected body is read and dropped, then the connection closes, so the client can read the error.
        if (!req.readableEnded) {
          res.setHeader('connection', 'close');
          req.resume();
        }
        throw err;
      }
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/file',
    summary: 'The file library',
    description:
      "Listed (accessScope given at upload), uploaded files of the caller's organization that its key may read, newest first. Requires File: Read " +
      '(in the workspace when workspaceId is given).',
    tags: ['Files'],
    auth: true,
    query: libraryQuery,
    responses: {
      200: {
        description: 'Files',
        schema: z.object({ files: z.array(fileView), limit: z.number(), offset: z.number() }),
      },
      404: { description: 'The workspace named by workspaceId does not exist' },
    },
    handler: async ({ res, auth, query }) => {
      const records = await files.listLibrary(auth, { ...query, extension: query.fileExtension?.toLowerCase() });
      res.json({ files: records.map((r) => view(files, r)), limit: query.limit, offset: query.offset });
    },
  });

  api.route({
    method: 'get',
    path: '/api/v1/file/:fileId',
    summary: 'Download a file (its fileUrl)',
    description:
      "The bytes with their content type and file name. Requires File: Read and a key inside the file's access scope.",
    tags: ['Files'],
    auth: true,
    params: fileParams,
    responses: {
      200: { description: 'The file bytes' },
      403: { description: "Lacks File: Read, outside the file's access scope, or another organization's file" },
      404: { description: 'No such file, or its bytes were never uploaded' },
    },
    handler: async ({ res, auth, params }) => {
      const { record, name, stream } = await files.openForDownload(auth, params.fileId);
      res.setHeader('content-disposition', contentDisposition(name));
      res.setHeader('content-type', record.contentType);
      if (record.sizeBytes !== null) res.setHeader('content-length', String(record.sizeBytes));
      // Served from the API's origin: never let a browser sniff or run it (an uploaded .html stays inert).
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('content-security-policy', 'sandbox');
      stream.on('error', (err) => {
        ctx.logger.error({ err, fileId: record.id }, 'file stream failed');
        res.destroy(err);
      });
      // pipe() leaves the source open when the client goes away: close it (its fd or S3 socket) with the response.
      res.once('close', () => stream.destroy());
      stream.pipe(res);
    },
  });
}
