/** What `caseflow` exits with (docs/cli.md lists them); scripts tell the cases apart by these. */
export const exitCodes = {
  ok: 0,
  /** The service refused the request (4xx), or a file or argument was invalid. */
  refused: 1,
  /** Wrong usage: an unknown command or option, a missing argument. */
  usage: 2,
  /** The service could not be reached, refused the key (401), or failed (5xx). */
  unavailable: 3,
  /** A case or generation run that was waited for ended other than completed. */
  notCompleted: 4,
} as const;

/** An error the CLI reports as one message (plus detail lines), never as a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = exitCodes.refused,
    readonly details: string[] = [],
    /** The service's error body, printed as is with --json. */
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
