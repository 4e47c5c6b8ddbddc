import { readFile } from 'node:fs/promises';

/** The contract's limit: 10 MB per file, taken as 10 MiB (10 485 760 bytes). */
export const maxFileBytes = 10 * 1024 * 1024;

type Check = { kind: 'magic'; signatures: Buffer[] } | { kind: 'text' } | { kind: 'json' };

interface FileType {
  contentType: string;
  check: Check;
}

const magic = (...signatures: number[][]): Check => ({
  kind: 'magic',
  signatures: signatures.map((s) => Buffer.from(s)),
});
const zip = magic([0x50, 0x4b, 0x03, 0x04]);
const jpeg = magic([0xff, 0xd8, 0xff]);
const text: Check = { kind: 'text' };

/** The contract's supported extensions, what each is served as, and how its bytes are recognised. */
const fileTypes = {
  '.pdf': { contentType: 'application/pdf', check: magic([0x25, 0x50, 0x44, 0x46, 0x2d]) },
  '.docx': { contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', check: zip },
  '.xlsx': { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', check: zip },
  '.xls': { contentType: 'application/vnd.ms-excel', check: magic([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) },
  '.csv': { contentType: 'text/csv; charset=utf-8', check: text },
  '.txt': { contentType: 'text/plain; charset=utf-8', check: text },
  '.html': { contentType: 'text/html; charset=utf-8', check: text },
  '.xml': { contentType: 'application/xml; charset=utf-8', check: text },
  '.json': { contentType: 'application/json; charset=utf-8', check: { kind: 'json' } },
  '.jpeg': { contentType: 'image/jpeg', check: jpeg },
  '.jpg': { contentType: 'image/jpeg', check: jpeg },
  '.png': { contentType: 'image/png', check: magic([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
} satisfies Record<string, FileType>;

export type SupportedExtension = keyof typeof fileTypes;
export const supportedExtensions = Object.keys(fileTypes) as SupportedExtension[];

/** The supported extensions in any letter case (they are compared lower-cased), as one pattern a JSON Schema can carry. */
export const supportedExtensionPattern = new RegExp(
  `^(${supportedExtensions
    .map((extension) => extension.replace('.', '\\.').replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`))
    .join('|')})$`,
);

export function isSupportedExtension(extension: string): extension is SupportedExtension {
  return Object.hasOwn(fileTypes, extension);
}

export function contentTypeOf(extension: SupportedExtension): string {
  return fileTypes[extension].contentType;
}

const octetStream = 'application/octet-stream';

/** A node output's name or content type is not one the service stores. */
export class OutputTypeError extends Error {}

/** Control characters (C0, DEL, C1): a CR/LF in a content type would split the response headers it is served in. */
function hasControlCharacters(text: string): boolean {
  return /\p{Cc}/u.test(text);
}

/**
 * The extension and content type a node output is stored and served with.
 * Only the contract's types (by the name's extension) or, for other names,
 * application/octet-stream; a content type the node gives must be that same
 * type (parameters aside) or octet-stream, and never carries control
 * characters (a CR/LF would split the download's headers).
 */
export function outputFileType(
  name: string,
  givenContentType: string,
): { extension: SupportedExtension | ''; contentType: string } {
  if (hasControlCharacters(givenContentType))
    throw new OutputTypeError(`Output file ${JSON.stringify(name)}: content type has control characters`);
  const dot = name.lastIndexOf('.');
  const candidate = dot >= 0 ? name.slice(dot).toLowerCase() : '';
  const extension = isSupportedExtension(candidate) ? candidate : '';
  const contentType = extension ? contentTypeOf(extension) : octetStream;
  const given = givenContentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (given !== '' && given !== octetStream && given !== contentType.split(';')[0]) {
    throw new OutputTypeError(
      `Output file ${JSON.stringify(name)}: content type ${JSON.stringify(given)} is not allowed; use a name ending in ${supportedExtensions.join(' ')} with its type, or application/octet-stream`,
    );
  }
  return { extension, contentType };
}

/** The upper-case name used by `allowed_file_types` tags: '.pdf' → 'PDF'; JPG and JPEG name one type. */
export function typeName(extension: string): string {
  const name = extension.replace(/^\./, '').toUpperCase();
  return name === 'JPG' ? 'JPEG' : name;
}

/** Whether a file's extension is one of the allowed upper-case type names. */
export function extensionAllowed(extension: string, allowedTypes: string[]): boolean {
  const name = typeName(extension);
  return allowedTypes.some((allowed) => typeName(allowed) === name);
}

/** The bytes do not match the declared extension. */
export class ContentMismatchError extends Error {
  constructor(
    readonly extension: string,
    detail: string,
  ) {
    super(`The uploaded bytes are not a valid ${extension} file: ${detail}`);
    this.name = 'ContentMismatchError';
  }
}

/**
 * Checks bytes against their declared type as they stream past: binary types
 * by their magic number (kept from the first chunks), text types as strict
 * UTF-8 (a streaming decoder, so nothing is buffered), JSON additionally by
 * parsing the finished file, which is bounded by maxFileBytes.
 */
export class ContentCheck {
  private head = Buffer.alloc(0);
  private readonly decoder: InstanceType<typeof TextDecoder> | undefined;

  constructor(private readonly extension: SupportedExtension) {
    this.decoder = fileTypes[extension].check.kind === 'magic' ? undefined : new TextDecoder('utf-8', { fatal: true });
  }

  update(chunk: Buffer): void {
    if (this.head.length < 16) this.head = Buffer.concat([this.head, chunk.subarray(0, 16 - this.head.length)]);
    if (this.decoder) this.decode(() => this.decoder?.decode(chunk, { stream: true }));
  }

  /** Call once every byte has passed through update(); `file` holds the same bytes. */
  async finish(file: string): Promise<void> {
    const check: Check = fileTypes[this.extension].check;
    if (check.kind === 'magic') {
      if (!check.signatures.some((signature) => this.head.subarray(0, signature.length).equals(signature))) {
        throw new ContentMismatchError(this.extension, 'its leading bytes (magic number) belong to another format');
      }
      return;
    }
    this.decode(() => this.decoder?.decode());
    if (check.kind === 'json') {
      const textContent = (await readFile(file, 'utf8')).replace(/^\uFEFF/, '');
      try {
        JSON.parse(textContent);
      } catch (err) {
        throw new ContentMismatchError(this.extension, (err as Error).message);
      }
    }
  }

  private decode(step: () => unknown): void {
    try {
      step();
    } catch {
      throw new ContentMismatchError(this.extension, 'it is not valid UTF-8 text');
    }
  }
}
