import { CliError, exitCodes } from './errors.js';
import { WorkflowFileError } from '../../workflow-files/errors.js';

/**
 * What a client command prints: human lines by default; with --json one JSON document on stdout (progress
 * lines are left out) so scripts can parse it.
 */
export class Output {
  constructor(readonly json: boolean) {}

  /** The command's answer. */
  result(value: unknown, human: () => string[]): void {
    const text = this.json ? JSON.stringify(value, null, 2) : human().join('\n');
    if (text) process.stdout.write(`${text}\n`);
  }

  /** A line while something runs; nothing with --json. */
  progress(line: string): void {
    if (!this.json) process.stdout.write(`${line}\n`);
  }

  get interactive(): boolean {
    return !this.json && process.stdout.isTTY;
  }

  /** Rewrites the current line (a progress bar) on a terminal. */
  redraw(line: string): void {
    if (this.interactive) process.stdout.write(`\r\x1b[2K${line}`);
  }

  /** Reports an error as the service's message and field list (never a stack) and returns the exit code. */
  failure(err: unknown): number {
    const known =
      err instanceof CliError
        ? err
        : err instanceof WorkflowFileError
          ? new CliError('the workflow file has problems', exitCodes.refused, err.problems)
          : new CliError(err instanceof Error ? err.message : String(err));
    process.stderr.write(`caseflow: ${known.message}\n${known.details.map((d) => `  ${d}\n`).join('')}`);
    if (this.json)
      process.stdout.write(
        `${JSON.stringify({ error: known.body ?? { message: known.message, details: known.details } }, null, 2)}\n`,
      );
    return known.exitCode;
  }
}

export const indent = (lines: string[]) => lines.map((l) => `  ${l}`);

/** A value as one line: text as is, anything else as JSON. */
export const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

const width = 30;

/** `[##########--------------------]  33%  building: …` from the run's progress (0 to 1) and its text. */
export function progressBar(progress: number | null, text: string): string {
  const done = Math.round(Math.min(1, Math.max(0, progress ?? 0)) * width);
  const percent = `${Math.round((progress ?? 0) * 100)}%`.padStart(4);
  return `[${'#'.repeat(done)}${'-'.repeat(width - done)}] ${percent}  ${text}`;
}
