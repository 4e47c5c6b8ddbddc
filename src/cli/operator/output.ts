import type { MigrationWaits } from '../../store/database.js';
import { describeBuildWait } from '../../domain/index-build-waits.js';

/** How the operator commands answer: the result as JSON on stdout, a refusal as one line on stderr. */
export function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function fail(message: string): never {
  say(message);
  process.exit(1);
}

/**
 * Said on stderr while the store's migration waits for another process (the service, upgrading too) to finish
 * migrating the store, or building an index CONCURRENTLY (or its own build waits for open transactions): on a large
 * store that takes minutes, and a silent command looks hung.
 */
export const sayWhileWaiting: MigrationWaits = {
  onWaitingForMigrations: () => say('waiting for another process to finish migrating the store'),
  onWaitingForBuild: (index, on) => say(describeBuildWait(index, on)),
};

/** One line on stderr, named for the command. */
function say(line: string): void {
  process.stderr.write(`caseflow: ${line}\n`);
}
