import type { Command } from 'commander';
import { exitCodes } from './errors.js';
import { Output } from './output.js';
import { Session } from './session.js';
import { loadSettings } from './settings.js';

export interface CommandContext {
  session: () => Session;
  out: Output;
}

/**
 * A client command: gets --json, a session made from the settings on first use, and reports any error as a
 * message with an exit code (docs/cli.md), never a stack trace.
 */
// The caller names the arguments commander passes (positionals, then the options object).
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export function clientAction<A extends unknown[]>(
  command: Command,
  /** Resolves to the exit code, or to anything else for success. */
  run: (context: CommandContext, ...args: A) => Promise<unknown>,
): Command {
  return command.option('--json', 'print one JSON document (for scripts)', false).action(async (...args: unknown[]) => {
    const self = args[args.length - 1] as Command;
    const out = new Output(self.opts<{ json: boolean }>().json);
    let session: Session | undefined;
    const context: CommandContext = { out, session: () => (session ??= new Session(loadSettings())) };
    try {
      const code = await run(context, ...(args.slice(0, -1) as A));
      process.exitCode = typeof code === 'number' ? code : exitCodes.ok;
    } catch (err) {
      process.exitCode = out.failure(err);
    }
  });
}
