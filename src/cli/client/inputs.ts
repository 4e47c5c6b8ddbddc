import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import path from 'node:path';
import { CliError, exitCodes } from './errors.js';
import type { Session } from './session.js';

/** Collects repeated `--input k=v` / `--file k=path` options. */
export function collectPair(value: string, previous: Array<[string, string]> = []): Array<[string, string]> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError(`"${value}": write name=value`);
  return [...previous, [value.slice(0, eq), value.slice(eq + 1)]];
}

/**
 * A command-line text as the value the input's type wants: numbers and booleans parsed, arrays and objects as
 * JSON; text stays text. An input the workflow does not declare is sent as typed, so the service names it.
 */
export function inputValue(name: string, text: string, type: string | undefined): unknown {
  if (type === 'str' || type === 'date' || type === 'json_string' || type === 'file') return text;
  if (type === 'int' || type === 'float') {
    const n = Number(text);
    if (text.trim() === '' || Number.isNaN(n)) throw new CliError(`--input ${name}: "${text}" is not a number`);
    return n;
  }
  if (type === 'bool') {
    if (text !== 'true' && text !== 'false') throw new CliError(`--input ${name}: write true or false`);
    return text === 'true';
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `--input` pairs as the values a workflow's (or a form's) declared types want. */
export function typedValues(
  given: Array<[string, string]> | undefined,
  declared: Record<string, { type: string } | undefined>,
): Record<string, unknown> {
  return Object.fromEntries((given ?? []).map(([name, text]) => [name, inputValue(name, text, declared[name]?.type)]));
}

/** The `--input` pairs typed by the inputs of a workflow (its latest version). */
export async function workflowInputs(
  session: Session,
  workflowId: string,
  given: Array<[string, string]> | undefined,
): Promise<Record<string, unknown>> {
  if (!given?.length) return {};
  const details = await session.call(
    session.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId } } }),
  );
  return typedValues(given, details.jobPayloadSchema);
}

/** Uploads a local file through the presigned flow (the URL is signed: the bytes go without the key). */
export async function uploadFile(session: Session, workflowId: string, file: string): Promise<string> {
  const bytes = await readFile(file).catch((err: unknown) => {
    throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  });
  const presigned = await session.call(
    session.client.POST('/api/v1/file/upload/presigned', {
      body: {
        fileExtension: path.extname(file),
        accessScope: 'workspace',
        workflowId,
        originalName: path.basename(file),
      },
    }),
  );
  const put = await fetch(presigned.presignedUrl, { method: 'PUT', body: bytes }).catch((err: unknown) => {
    throw new CliError(
      `cannot upload ${file}: ${err instanceof Error ? err.message : String(err)}`,
      exitCodes.unavailable,
    );
  });
  if (!put.ok) {
    const body = (await put.json().catch(() => ({}))) as { message?: unknown };
    const message = typeof body.message === 'string' ? body.message : put.statusText;
    throw new CliError(`upload of ${file} refused: ${message} (HTTP ${put.status})`);
  }
  return presigned.fileUrl;
}
