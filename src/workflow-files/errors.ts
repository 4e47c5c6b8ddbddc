/*
 * Its own module: the CLI's error output recognizes it without loading the compiler (start-up time).
 */

/** Every problem of a file at once, each `path: message`, so one run names all that is wrong or missing. */
export class WorkflowFileError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'WorkflowFileError';
  }
}
