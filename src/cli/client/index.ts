import type { Command } from 'commander';
import { registerCaseCommands } from './case-commands.js';
import { registerGenerateCommand } from './generate-command.js';
import { registerHookCommands } from './hook-commands.js';
import { registerIntegrationCommands } from './integration-commands.js';
import { registerLoginCommand } from './login-command.js';
import { registerScheduleCommands } from './schedule-commands.js';
import { registerTaskCommands } from './task-commands.js';
import { registerWorkflowCommands } from './workflow-commands.js';

/**
 * The client commands: they call a running caseflow over HTTP with the typed client (src/client), unlike the
 * operator commands that open the store. A new area (human tasks, schedules, hooks, …) adds one
 * `register…(program)` module here, built on `clientAction` (command.ts) and `Session` (session.ts).
 */
const registrars: Array<(program: Command) => void> = [
  registerLoginCommand,
  registerWorkflowCommands,
  registerCaseCommands,
  registerGenerateCommand,
  registerTaskCommands,
  registerScheduleCommands,
  registerHookCommands,
  registerIntegrationCommands,
];

export function registerClientCommands(program: Command): void {
  for (const register of registrars) register(program);
}
