/** How the operator commands answer: the result as JSON on stdout, a refusal as one line on stderr. */
export function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function fail(message: string): never {
  process.stderr.write(`caseflow: ${message}\n`);
  process.exit(1);
}
