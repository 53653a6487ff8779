// The extension's own agentls, for a machine where it is not installed: a venv in the
// extension's global storage with the wheel the .vsix carries (server/*.whl), made on first
// start, reused after, made again when the bundled wheel changes. No `vscode` import: the
// unit tests run it with real processes.
import { spawn } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

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

/** What the environment was made from: a new wheel (another version, another build) gives
 * another stamp. */
function stamp(wheel: string): string {
  const digest = createHash('sha256').update(fs.readFileSync(wheel)).digest('hex');
  return `${path.basename(wheel)} ${digest}\n`;
}

const STAMP = 'agentls-wheel.txt';

function commandIn(env: string): string[] {
  return [venvPython(env), '-m', 'agentls'];
}

/** The server command of an environment already made from this wheel, else undefined. */
export function existingEnvironment(storage: string, wheel: string): string[] | undefined {
  const env = path.join(storage, 'env');
  try {
    if (fs.readFileSync(path.join(env, STAMP), 'utf8') === stamp(wheel) && fs.existsSync(venvPython(env))) {
      return commandIn(env);
    }
  } catch {
    // no environment yet
  }
  return undefined;
}

/** Runs a program, each line of its output to `line`; rejects with its last lines on failure. */
export function run(program: string, args: string[], line: (text: string) => void = () => undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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

/** The first of `pythons` that is 3.10 or newer and can make a venv with pip. */
export async function usablePython(pythons: readonly string[]): Promise<string> {
  for (const python of pythons) {
    try {
      await run(python, ['-c', USABLE]);
      return python;
    } catch {
      // missing, too old, or without venv/ensurepip (Debian's python3 without python3-venv)
    }
  }
  throw new NoPython(pythons);
}

/**
 * Makes the environment: a venv from the first usable of `pythons`, the wheel installed with
 * pip (its dependencies from the package index). Built beside the old one and renamed over
 * it, so a failure leaves no half environment. Resolves to the server command.
 */
export async function makeEnvironment(
  storage: string,
  wheel: string,
  pythons: readonly string[],
  report: (text: string) => void,
): Promise<string[]> {
  const python = await usablePython(pythons);
  fs.mkdirSync(storage, { recursive: true });
  const building = fs.mkdtempSync(path.join(storage, 'env-building-'));
  try {
    report(`creating a virtual environment with ${python}`);
    await run(python, ['-m', 'venv', building]);
    report(`installing ${path.basename(wheel)} and its dependencies`);
    await run(
      venvPython(building),
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', wheel],
      (text) => report(text.slice(0, 120)),
    );
    fs.writeFileSync(path.join(building, STAMP), stamp(wheel));
    const env = path.join(storage, 'env');
    fs.rmSync(env, { recursive: true, force: true });
    fs.renameSync(building, env);
    return commandIn(env);
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    // Another window may have made it meanwhile.
    const made = existingEnvironment(storage, wheel);
    if (made) {
      return made;
    }
    throw error;
  }
}
