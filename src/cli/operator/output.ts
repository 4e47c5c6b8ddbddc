/** How the operator commands answer: the result as JSON on stdout, a refusal as one line on stderr. */
export function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function fail(message: string): never {
  process.stderr.write(`caseflow: ${message}\n`);
  process.exit(1);
}

/**
 * Said on stderr while the store's migration waits for another process (the service, upgrading too) to finish
 * building an index CONCURRENTLY: on a large table that takes minutes, and a silent command looks hung.
 */
export function sayWaitingForIndexBuild(index: string): void {
  process.stderr.write(`caseflow: waiting for another process to finish building the store's index ${index}\n`);
}
