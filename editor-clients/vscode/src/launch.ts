// Where the programs the extension starts come from, and where they start. A repository is
// not ours to run: nothing is taken from inside a workspace folder or from a relative PATH
// entry (which names whatever folder the process happens to be in), and nothing starts with
// a workspace folder as its cwd, where `python -m` would import the folder's modules. Every
// program is resolved here to an absolute path and started in a folder of the extension's
// own. No `vscode` import: the unit tests run it with real processes.
import * as fs from 'fs';
import * as path from 'path';
import type { Executable } from 'vscode-languageclient/node';

/** What every start needs: the folder it starts in, its environment, and the workspace
 * folders no program may come from. */
export interface Launch {
  cwd: string;
  env: NodeJS.ProcessEnv;
  folders: readonly string[];
}

/** The extension's own folder to start programs in: a folder of its storage that nothing
 * writes to, so a `-m` or a relative path in a command finds nothing there. */
export function privateFolder(storage: string): string {
  const folder = path.join(storage, 'cwd');
  fs.mkdirSync(folder, { recursive: true });
  return folder;
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** Whether `file` is `folder` or lies in it, links followed (a link into a workspace folder
 * counts as inside it). */
export function inside(file: string, folder: string): boolean {
  const relative = path.relative(realPath(folder), realPath(file));
  return !relative.startsWith('..') && !path.isAbsolute(relative);
}

export function insideAny(file: string, folders: readonly string[]): boolean {
  return folders.some((folder) => inside(file, folder));
}

function isExecutable(candidate: string): boolean {
  try {
    fs.accessSync(candidate, fs.constants.X_OK);
    return fs.statSync(candidate).isFile();
  } catch {
    return false;
  }
}

/** The names a program may have on disk: Windows adds PATHEXT's extensions. */
function fileNames(program: string, env: NodeJS.ProcessEnv): string[] {
  if (process.platform !== 'win32') {
    return [program];
  }
  const extensions = (env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean);
  return [program, ...extensions.map((extension) => program + extension.toLowerCase())];
}

/** Whether `program` is a bare name, to be looked up on PATH. */
function isBareName(program: string): boolean {
  return !program.includes('/') && !(process.platform === 'win32' && program.includes('\\'));
}

/**
 * The absolute path `program` is started from, or undefined (missing, or only in a place we
 * never run from). An absolute program is taken as given: someone named it. A relative path
 * is refused: it would mean a different file in every cwd. A bare name is looked up on PATH,
 * skipping relative entries (`.`, `node_modules/.bin`) and entries inside a workspace folder,
 * and a hit that links into a workspace folder; spawn then gets the absolute path, so it does
 * no lookup of its own (which on Windows would try the cwd first).
 */
export function findProgram(program: string, env: NodeJS.ProcessEnv, folders: readonly string[]): string | undefined {
  if (path.isAbsolute(program)) {
    return isExecutable(program) ? program : undefined;
  }
  if (!isBareName(program)) {
    return undefined;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir) || insideAny(dir, folders)) {
      continue;
    }
    for (const name of fileNames(program, env)) {
      const candidate = path.join(dir, name);
      if (isExecutable(candidate) && !insideAny(candidate, folders)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** How the language client starts the server `command`: its program by absolute path, in
 * the private folder; undefined when the program is not found. */
export function serverExecutable(command: readonly string[], launch: Launch): Executable | undefined {
  const program = findProgram(command[0], launch.env, launch.folders);
  if (!program) {
    return undefined;
  }
  return { command: program, args: command.slice(1), options: { cwd: launch.cwd, env: launch.env } };
}
