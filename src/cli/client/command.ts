import type { Command } from 'commander';
import { z } from 'zod';
import { CliError, exitCodes } from './errors.js';
import { Output } from './output.js';
import { Session } from './session.js';
import { loadSettings } from './settings.js';

export interface CommandContext {
  session: () => Session;
  out: Output;
}

/** Repeated `--input k=v` style options, as `collectPair` gathers them. */
export const pairs = z.array(z.tuple([z.string(), z.string()])).optional();
/** The options object of a command that reads none of its own (only --json, which clientAction handles). */
export const noOptions = z.object({});

/**
 * A client command: gets --json, a session made from the settings on first use, and reports any error as a
 * message with an exit code (docs/cli.md), never a stack trace. `args` describes what commander passes (the
 * positionals, then the options object): the command's arguments are checked against it, not cast.
 */
export function clientAction<S extends z.ZodType<unknown[]>>(
  command: Command,
  args: S,
  /** Resolves to the exit code, or to anything else for success. */
  run: (context: CommandContext, args: z.output<S>) => Promise<unknown>,
): Command {
  return command
    .option('--json', 'print one JSON document (for scripts)', false)
    .action(async (...given: unknown[]) => {
      const self = given[given.length - 1] as Command;
      const out = new Output(self.opts<{ json: boolean }>().json);
      let session: Session | undefined;
      const context: CommandContext = { out, session: () => (session ??= new Session(loadSettings())) };
      try {
        const parsed = args.safeParse(given.slice(0, -1));
        if (!parsed.success)
          throw new CliError(
            `${self.name()}: invalid arguments`,
            exitCodes.usage,
            parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
          );
        const code = await run(context, parsed.data);
        process.exitCode = typeof code === 'number' ? code : exitCodes.ok;
      } catch (err) {
        process.exitCode = out.failure(err);
      }
    });
}
