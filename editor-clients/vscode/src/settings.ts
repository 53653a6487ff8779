// The agentls.* settings: which of them the server gets, and the command that starts it.
// No `vscode` import: a getter stands in for WorkspaceConfiguration.get in the unit tests.
import * as path from 'path';
import manifest from '../package.json';

export const SECTION = 'agentls';

/** The extension's own settings under the same section; the server ignores them. */
const CLIENT_ONLY = ['server.command', 'trace.server'];

/** The server's settings, by the names the server reads: every contributed agentls.*
 * setting but the extension's own (package.json is bundled in). It is held to
 * the server's settings (server/agentls/settings/assembly.py) by
 * tests/config/test_settings_contract.py, so the names are written nowhere else. */
export const SERVER_SETTINGS: readonly string[] = Object.keys(manifest.contributes.configuration.properties)
  .map((name) => name.slice(SECTION.length + 1))
  .filter((name) => !CLIENT_ONLY.includes(name));

/** The program found on PATH when agentls.server.command is unset. */
export const SERVER_PROGRAM = 'agentls';

export type SettingGetter = (name: string) => unknown;

/** The object sent as initializationOptions.agentls and answered to workspace/configuration. */
export function serverSettings(get: SettingGetter): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const name of SERVER_SETTINGS) {
    const value = get(name);
    if (value !== undefined) {
      settings[name] = value;
    }
  }
  return settings;
}

export class BadServerCommand extends Error {}

/** agentls.server.command as [program, ...args], undefined when unset; a clear error for
 * anything else. */
export function serverCommand(get: SettingGetter): string[] | undefined {
  const value = get('server.command');
  if (value === undefined || value === null) {
    return undefined;
  }
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((part): part is string => typeof part === 'string') ||
    !value[0].trim()
  ) {
    throw new BadServerCommand(
      'agentls.server.command must be a list of strings: the program, then its arguments, ' +
        'e.g. ["agentls"] or ["/path/to/venv/bin/agentls"].',
    );
  }
  if (isRelativePath(value[0])) {
    // The server starts in the extension's own folder, not in the workspace (launch.ts): a
    // relative path would find nothing there, or whatever a cwd held.
    throw new BadServerCommand(
      `agentls.server.command's program "${value[0]}" is a relative path: give its absolute path, ` +
        'or a name found on PATH.',
    );
  }
  return value;
}

function isRelativePath(program: string): boolean {
  return !path.isAbsolute(program) && (program.includes('/') || program.includes(path.sep));
}
