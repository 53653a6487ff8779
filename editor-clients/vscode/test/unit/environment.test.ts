import * as assert from 'assert';
import { execFileSync, spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { bundledWheel, existingEnvironment, makeEnvironment, NoPython, usablePython } from '../../src/environment';
import { inside, type Launch, privateFolder, serverExecutable } from '../../src/launch';

function folder(): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-env-')));
}

/** How the server would start the environment's programs, with `folders` as the workspace. */
function launchIn(storage: string, folders: string[] = [], env: NodeJS.ProcessEnv = process.env): Launch {
  return { cwd: privateFolder(storage), env, folders };
}

/** An environment as makeEnvironment leaves it, made from `wheel`'s current bytes. */
/** An environment as makeEnvironment leaves it in `storage/name`: stamped last, when done. */
function madeFrom(storage: string, name: string, stampText?: string): string {
  const bin = path.join(storage, name, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'python'), '', { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'agentls'), '', { mode: 0o755 });
  if (stampText) {
    fs.writeFileSync(path.join(storage, name, 'agentls-wheel.txt'), stampText);
  }
  return path.join(bin, 'agentls');
}

describe('the extension’s own environment', () => {
  it('finds the one bundled wheel', () => {
    const extension = folder();
    assert.strictEqual(bundledWheel(extension), undefined);
    fs.mkdirSync(path.join(extension, 'server'));
    fs.writeFileSync(path.join(extension, 'server', 'agentls-0.1.0-py3-none-any.whl'), 'wheel');
    assert.strictEqual(bundledWheel(extension), path.join(extension, 'server', 'agentls-0.1.0-py3-none-any.whl'));
  });

  it('is reused for the same wheel and made again for another', () => {
    const extension = folder();
    fs.mkdirSync(path.join(extension, 'server'));
    const wheel = path.join(extension, 'server', 'agentls-0.1.0-py3-none-any.whl');
    fs.writeFileSync(wheel, 'the first build');
    const storage = folder();
    assert.strictEqual(existingEnvironment(storage, wheel), undefined, 'nothing made yet');
    const digest = createHash('sha256').update('the first build').digest('hex');
    const stamped = `agentls-0.1.0-py3-none-any.whl ${digest}\n`;
    madeFrom(storage, `env-${digest.slice(0, 12)}-aaaaaa`); // another window, still making it
    assert.strictEqual(existingEnvironment(storage, wheel), undefined, 'unfinished: not used');
    madeFrom(storage, 'env', stamped); // where an earlier version moved it: its scripts do not start
    assert.strictEqual(existingEnvironment(storage, wheel), undefined, 'moved into place: not used');
    const agentls = madeFrom(storage, `env-${digest.slice(0, 12)}-bbbbbb`, stamped);
    assert.deepStrictEqual(existingEnvironment(storage, wheel), [agentls]);
    fs.writeFileSync(wheel, 'a rebuild with the same version');
    assert.strictEqual(existingEnvironment(storage, wheel), undefined, 'another wheel: made again');
  });

  it('says what to install when there is no usable Python', async () => {
    const notPython = path.join(folder(), 'python3');
    fs.writeFileSync(notPython, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    await assert.rejects(usablePython(['/nonexistent/python3', notPython], launchIn(folder())), (error: Error) => {
      assert.ok(error instanceof NoPython);
      assert.match(error.message, /Python 3\.10 or newer/);
      assert.match(error.message, /apt install python3 python3-venv/);
      assert.match(error.message, /agentls\.server\.command/);
      return true;
    });
  });

  it('takes a Python that can make a venv, by absolute path', async () => {
    const python = await usablePython(['/nonexistent/python3', 'python3'], launchIn(folder()));
    assert.ok(path.isAbsolute(python) && path.basename(python) === 'python3', python);
  });

  it('never takes a Python from a workspace folder or a relative PATH entry', async () => {
    const workspace = folder();
    const marker = path.join(folder(), 'ran');
    const trap = `#!/bin/sh\necho "$0" >> '${marker}'\nexit 0\n`;
    for (const place of ['python3', 'bin/python3', 'node_modules/.bin/python3']) {
      fs.mkdirSync(path.dirname(path.join(workspace, place)), { recursive: true });
      fs.writeFileSync(path.join(workspace, place), trap, { mode: 0o755 });
    }
    const env = { ...process.env, PATH: ['.', 'node_modules/.bin', path.join(workspace, 'bin'), process.env.PATH].join(path.delimiter) };
    const before = process.cwd();
    process.chdir(workspace);
    try {
      const launch = launchIn(folder(), [workspace], env);
      const python = await usablePython([path.join(workspace, 'python3'), 'python3'], launch);
      assert.ok(!inside(python, workspace), python);
    } finally {
      process.chdir(before);
    }
    assert.ok(!fs.existsSync(marker), `ran ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''}`);
  });
});


/** A wheel of a stand-in agentls: its `agentls` console script prints a line and exits. */
function stubWheel(dir: string): string {
  const wheel = path.join(dir, 'agentls-0.0.0-py3-none-any.whl');
  const files: Record<string, string> = {
    'agentls/__init__.py': '',
    'agentls/cli.py': 'def main():\n    print("the bundled agentls started")\n    return 0\n',
    'agentls-0.0.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: agentls\nVersion: 0.0.0\n',
    'agentls-0.0.0.dist-info/WHEEL': 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
    'agentls-0.0.0.dist-info/entry_points.txt': '[console_scripts]\nagentls = agentls.cli:main\n',
  };
  const zip =
    'import json, sys, zipfile\n' +
    'files = json.loads(sys.argv[2])\n' +
    'record = "".join(f"{name},,\\n" for name in [*files, "agentls-0.0.0.dist-info/RECORD"])\n' +
    'with zipfile.ZipFile(sys.argv[1], "w") as wheel:\n' +
    '    for name, text in {**files, "agentls-0.0.0.dist-info/RECORD": record}.items():\n' +
    '        wheel.writestr(name, text)\n';
  execFileSync('python3', ['-I', '-c', zip, wheel, JSON.stringify(files)]);
  return wheel;
}

/** Python modules that record their import in `marker`: what a hostile folder would hold. */
function trapModules(dir: string, marker: string, names: readonly string[]): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const name of names) {
    fs.writeFileSync(path.join(dir, `${name}.py`), `open(${JSON.stringify(marker)}, "a").write("${name} imported\\n")\n`);
  }
  return dir;
}

describe('the environment it makes and starts (real venv and pip)', function () {
  this.timeout(300000); // a venv with pip takes seconds, more on a loaded machine

  const root = folder();
  const marker = path.join(root, 'imported');
  const workspace = trapModules(path.join(root, 'workspace'), marker, ['agentls', 'venv', 'pip', 'sitecustomize']);
  const storage = path.join(root, 'storage');
  const argvLog = path.join(root, 'python-argv');
  let command: string[] = [];

  before(async function () {
    if (process.platform === 'win32') {
      this.skip(); // the wrapper below is a shell script
    }
    // The python it is given: records its cwd and arguments, then runs the real one.
    const python = path.join(root, 'python3');
    const real = await usablePython(['python3'], launchIn(root));
    fs.writeFileSync(python, `#!/bin/sh\necho "$PWD $*" >> '${argvLog}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
    // PYTHONPATH naming the trap folder: an isolated (-I) python ignores it.
    const env = { ...process.env, PYTHONPATH: workspace };
    madeFrom(storage, 'env', 'an earlier version’s\n');
    madeFrom(storage, 'env-0123456789ab-cccccc', 'another wheel’s\n');
    command = await makeEnvironment(storage, stubWheel(root), [python], launchIn(storage, [workspace], env), () => undefined);
  });

  it('runs python and pip isolated, in its private folder', () => {
    const cwd = privateFolder(storage);
    const runs = fs.readFileSync(argvLog, 'utf8').trim().split('\n');
    assert.strictEqual(runs.length, 2, 'the probe and the venv');
    for (const run of runs) {
      assert.ok(run.startsWith(`${cwd} -I `), run);
    }
    assert.ok(!fs.existsSync(marker), fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '');
  });

  it('starts the server by the absolute path of its console script, where it was made', () => {
    assert.strictEqual(command.length, 1);
    assert.ok(path.isAbsolute(command[0]) && inside(command[0], storage), command[0]);
    assert.strictEqual(path.basename(command[0]), 'agentls');
    assert.deepStrictEqual(existingEnvironment(storage, path.join(root, 'agentls-0.0.0-py3-none-any.whl')), command);
  });

  it('removes the environments of other wheels, not its private folder', () => {
    const left = fs.readdirSync(storage).sort();
    assert.deepStrictEqual(left, [path.basename(path.dirname(path.dirname(command[0]))), 'cwd'].sort());
  });

  it('never imports the workspace’s agentls.py, even with the workspace as the cwd', () => {
    const started = serverExecutable(command, launchIn(storage, [workspace]));
    assert.ok(started);
    const asTheClientStartsIt = spawnSync(started.command, started.args ?? [], { ...started.options, encoding: 'utf8' });
    assert.ok(!fs.existsSync(marker), `the workspace ran: ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''}`);
    assert.match(asTheClientStartsIt.stdout, /the bundled agentls started/, String(asTheClientStartsIt.error));
    assert.ok(started.options?.cwd && !inside(started.options.cwd, workspace), 'not started in the workspace');
    // The console script puts its own folder first on sys.path, not the cwd: the workspace
    // as cwd (what the client gave before) would not reach it either.
    const fromTheWorkspace = spawnSync(command[0], [], { cwd: workspace, encoding: 'utf8' });
    assert.match(fromTheWorkspace.stdout, /the bundled agentls started/);
    assert.ok(!fs.existsSync(marker), fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '');
  });
});
