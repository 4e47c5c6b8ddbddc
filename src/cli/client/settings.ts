import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CliError } from './errors.js';

/** Where and as whom the client commands call caseflow. */
export interface ClientSettings {
  url: string;
  apiKey: string;
  /** The workspace new workflows, uploads and generation runs go to; the key's only one when unset. */
  workspace?: string;
}

const fileSchema = z
  .object({ url: z.url().optional(), apiKey: z.string().min(1).optional(), workspace: z.uuid().optional() })
  .strict();

export const defaultUrl = 'http://127.0.0.1:8080';

/** CASEFLOW_CONFIG, else $XDG_CONFIG_HOME/caseflow/config.json, else ~/.config/caseflow/config.json. */
export function settingsPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CASEFLOW_CONFIG) return path.resolve(env.CASEFLOW_CONFIG);
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'caseflow', 'config.json');
}

function readSettingsFile(file: string): z.infer<typeof fileSchema> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${file}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success)
    throw new CliError(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** The environment (CASEFLOW_URL, CASEFLOW_API_KEY, CASEFLOW_WORKSPACE) wins over the config file. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): ClientSettings {
  const file = settingsPath(env);
  const saved = readSettingsFile(file);
  const apiKey = env.CASEFLOW_API_KEY || saved.apiKey;
  if (!apiKey)
    throw new CliError(`no API key: set CASEFLOW_API_KEY, or run "caseflow login --key <key>" to keep it in ${file}`);
  const workspace = env.CASEFLOW_WORKSPACE || saved.workspace;
  return {
    url: (env.CASEFLOW_URL || saved.url || defaultUrl).replace(/\/+$/, ''),
    apiKey,
    ...(workspace ? { workspace } : {}),
  };
}

/** Written readable by its owner only: it holds a key. */
export function saveSettings(file: string, settings: ClientSettings): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}
