// The extension's own agentls, for a machine where it is not installed: a venv in the
// extension's global storage with the wheel the .vsix carries (server/*.whl), made on first
// start, reused after, made again when the bundled wheel changes. Every program here starts
// by absolute path, isolated (`-I`: neither the cwd nor PYTHON* variables reach sys.path), in
// the extension's private folder (launch.ts). No `vscode` import: the unit tests run it with
// real processes.
import { spawn } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { findProgram, insideAny, type Launch } from './launch';

/** The wheel bundled in the extension, or undefined in a checkout that did not build one. */
export function bundledWheel(extensionPath: string): string | undefined {
  const dir = path.join(extensionPath, 'server');
  const wheels = fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => /^agentls-.*\.whl$/.test(name)) : [];
  return wheels.length === 1 ? path.join(dir, wheels[0]) : undefined;
}

export class NoPython extends Error {
  constructor(tried: readonly string[]) {
    super(
      `agentls runs on Python 3.10 or newer (with its venv module), and none was found (tried ${tried.join(', ')}). ` +
        'Install Python 3.10+ (Debian/Ubuntu: sudo apt install python3 python3-venv; macOS and Windows: ' +
        'python.org or the Python extension), or install agentls so that `agentls` is on PATH, or set ' +
        'agentls.server.command.',
    );
  }
}

function venvPython(env: string): string {
  return process.platform === 'win32' ? path.join(env, 'Scripts', 'python.exe') : path.join(env, 'bin', 'python');
}

/** The environment's `agentls` console script. Started by this path, not as `python -m
 * agentls`: `-m` would import an `agentls.py` from the cwd first; the script puts only its
 * own folder on sys.path. */
function venvAgentls(env: string): string {
  return process.platform === 'win32' ? path.join(env, 'Scripts', 'agentls.exe') : path.join(env, 'bin', 'agentls');
}

/** What an environment made from `wheel` is known by. `stamp`: its name and digest, written
 * in the environment last (one without it is unfinished); another wheel (another version,
 * another build) gives another stamp. `prefix`: the start of its folder's name. It is made
 * where it stays (a console script names its venv's python by absolute path, so a moved
 * venv's scripts do not start), in a folder of its own: two windows making it at once each
 * finish their own. */
function identity(wheel: string): { stamp: string; prefix: string } {
  const digest = createHash('sha256').update(fs.readFileSync(wheel)).digest('hex');
  return { stamp: `${path.basename(wheel)} ${digest}\n`, prefix: `env-${digest.slice(0, 12)}-` };
}

const STAMP = 'agentls-wheel.txt';

function commandIn(env: string): string[] {
  return [venvAgentls(env)];
}

function isFinished(env: string, stamp: string): boolean {
  try {
    return fs.readFileSync(path.join(env, STAMP), 'utf8') === stamp && fs.existsSync(venvAgentls(env));
  } catch {
    return false; // unfinished, or not an environment
  }
}

/** The server command of an environment already made from this wheel, else undefined. */
export function existingEnvironment(storage: string, wheel: string): string[] | undefined {
  const { stamp, prefix } = identity(wheel);
  const names = fs.existsSync(storage) ? fs.readdirSync(storage).sort() : [];
  const made = names.find((name) => name.startsWith(prefix) && isFinished(path.join(storage, name), stamp));
  return made ? commandIn(path.join(storage, made)) : undefined;
}

/** Removes the environments of other wheels (and the `env` of versions that moved it into
 * place); one in use by another window's server is left for a later start. */
function removeOutdated(storage: string, prefix: string): void {
  for (const name of fs.readdirSync(storage)) {
    if (/^env(-|$)/.test(name) && !name.startsWith(prefix)) {
      try {
        fs.rmSync(path.join(storage, name), { recursive: true, force: true });
      } catch {
        // in use (Windows), or already gone
      }
    }
  }
}

/** Runs a program (an absolute path) in `launch.cwd`, each line of its output to `line`;
 * rejects with its last lines on failure. */
export function run(
  program: string,
  args: string[],
  launch: Launch,
  line: (text: string) => void = () => undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd: launch.cwd, env: launch.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const last: string[] = [];
    let partial = '';
    const take = (data: Buffer) => {
      const lines = (partial + data.toString()).split(/\r?\n/);
      partial = lines.pop() ?? '';
      for (const text of lines.filter((l) => l.trim())) {
        last.push(text);
        last.splice(0, last.length - 20);
        line(text.trim());
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${program} ${args.join(' ')} failed (${code}):\n${last.join('\n')}`)),
    );
  });
}

const USABLE = 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 10) else 3)';

/** `python` as an absolute path, unless it is missing or lies in a workspace folder (even
 * when named by absolute path: the caller's pick may come from the folder's settings). */
function pythonOutsideWorkspace(python: string, launch: Launch): string | undefined {
  const program = findProgram(python, launch.env, launch.folders);
  return program && !insideAny(program, launch.folders) ? program : undefined;
}

/** The first of `pythons` (names on PATH or absolute paths) that is 3.10 or newer and can
 * make a venv with pip, as an absolute path. */
export async function usablePython(pythons: readonly string[], launch: Launch): Promise<string> {
  for (const python of pythons) {
    const program = pythonOutsideWorkspace(python, launch);
    try {
      if (program) {
        await run(program, ['-I', '-c', USABLE], launch);
        return program;
      }
    } catch {
      // too old, or without venv/ensurepip (Debian's python3 without python3-venv)
    }
  }
  throw new NoPython(pythons);
}

/**
 * Makes the environment: a venv from the first usable of `pythons`, the wheel installed with
 * pip (its dependencies from the package index), in a new folder that only counts once its
 * stamp is written; a failure removes it. Resolves to the server command.
 */
export async function makeEnvironment(
  storage: string,
  wheel: string,
  pythons: readonly string[],
  launch: Launch,
  report: (text: string) => void,
): Promise<string[]> {
  const python = await usablePython(pythons, launch);
  fs.mkdirSync(storage, { recursive: true });
  const { stamp, prefix } = identity(wheel);
  const env = fs.mkdtempSync(path.join(storage, prefix));
  try {
    report(`creating a virtual environment with ${python}`);
    await run(python, ['-I', '-m', 'venv', env], launch);
    report(`installing ${path.basename(wheel)} and its dependencies`);
    await run(
      venvPython(env),
      ['-I', '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', wheel],
      launch,
      (text) => report(text.slice(0, 120)),
    );
    fs.writeFileSync(path.join(env, STAMP), stamp);
    removeOutdated(storage, prefix);
    return commandIn(env);
  } catch (error) {
    fs.rmSync(env, { recursive: true, force: true });
    // Another window may have made it meanwhile.
    const made = existingEnvironment(storage, wheel);
    if (made) {
      return made;
    }
    throw error;
  }
}
