// The wording of the store's index-build waits, outside store/ so the CLI says it without loading the store at start.

/**
 * What a build of an index waits for: another process's build of it (told at once, then every 30 s), or, building it,
 * the transactions open on its table (told every 30 s the build lasts: an idle-in-transaction session holds it up for
 * as long as it stays open, in silence otherwise).
 */
export type BuildWait = 'another build' | 'open transactions';

/** What an operator is told of such a wait. */
export function describeBuildWait(index: string, on: BuildWait): string {
  return on === 'another build'
    ? `waiting for another process to finish building the store's index ${index}`
    : `still building the store's index ${index} (CONCURRENTLY): a build waits for every transaction open on its ` +
        'table to end (a session idle in transaction holds it up until it ends)';
}
