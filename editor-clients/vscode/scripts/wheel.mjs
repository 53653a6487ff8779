// Builds the agentls wheel of this checkout into server/, which the .vsix carries: the
// extension installs it into its own environment when agentls is not on PATH.
// The Python is $AGENTLS_PYTHON, else python3 (an activated venv's, when there is one).
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { fileURLToPath } from 'url';

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const repo = path.resolve(here, '..', '..');
const out = path.join(here, 'server');
fs.rmSync(out, { recursive: true, force: true }); // exactly one wheel: this checkout's
// setuptools copies the package into build/ and never removes what is gone from the
// source: a module deleted since the last build would ship in the wheel.
fs.rmSync(path.join(repo, 'build'), { recursive: true, force: true });
const python = process.env.AGENTLS_PYTHON || 'python3';
execFileSync(
  python,
  ['-m', 'pip', 'wheel', '--no-deps', '--quiet', '--disable-pip-version-check', '--wheel-dir', out, repo],
  { stdio: 'inherit' },
);
const wheels = fs.readdirSync(out).filter((name) => name.endsWith('.whl'));
if (wheels.length !== 1) {
  throw new Error(`expected one wheel in ${out}, found: ${wheels.join(', ') || 'none'}`);
}
console.log(`bundled ${wheels[0]}`);
