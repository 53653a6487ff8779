import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { findProgram, inside, type Launch, privateFolder, serverExecutable } from '../../src/launch';

function folder(prefix = 'agentls-launch-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

function executable(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\n', { mode: 0o755 });
  return file;
}

/** A cloned repository with its own `agentls` where PATH tricks could find it. */
function hostileWorkspace(): string {
  const workspace = folder('agentls-workspace-');
  for (const place of ['agentls', 'bin/agentls', 'node_modules/.bin/agentls']) {
    executable(path.join(workspace, place));
  }
  return workspace;
}

/** Runs `body` with the process in `cwd`, as an extension host opened on it could be. */
function inFolder<T>(cwd: string, body: () => T): T {
  const before = process.cwd();
  process.chdir(cwd);
  try {
    return body();
  } finally {
    process.chdir(before);
  }
}

describe('where programs come from', () => {
  it('finds the program on PATH or by absolute path, and reports a missing one', () => {
    const dir = folder();
    const program = executable(path.join(dir, 'agentls'));
    fs.writeFileSync(path.join(dir, 'plain'), 'not executable', { mode: 0o644 });
    assert.strictEqual(findProgram('agentls', { PATH: `/nonexistent${path.delimiter}${dir}` }, []), program);
    assert.strictEqual(findProgram(program, {}, []), program);
    assert.strictEqual(findProgram('plain', { PATH: dir }, []), undefined);
    assert.strictEqual(findProgram('agentls', { PATH: '/nonexistent' }, []), undefined);
  });

  it('never finds a program through a relative PATH entry', () => {
    const workspace = hostileWorkspace();
    const installed = executable(path.join(folder(), 'agentls'));
    const env = { PATH: ['.', 'bin', 'node_modules/.bin', '', path.dirname(installed)].join(path.delimiter) };
    inFolder(workspace, () => {
      assert.strictEqual(findProgram('agentls', env, [workspace]), installed);
      assert.strictEqual(findProgram('agentls', { PATH: `.${path.delimiter}node_modules/.bin` }, []), undefined);
    });
  });

  it('never finds a program in a workspace folder, nor one linked into it', () => {
    const workspace = hostileWorkspace();
    const links = folder();
    fs.symlinkSync(path.join(workspace, 'agentls'), path.join(links, 'agentls'));
    const installed = executable(path.join(folder(), 'agentls'));
    const env = { PATH: [path.join(workspace, 'bin'), workspace, links, path.dirname(installed)].join(path.delimiter) };
    assert.strictEqual(findProgram('agentls', env, [workspace]), installed);
    assert.strictEqual(findProgram('agentls', { PATH: path.join(workspace, 'bin') }, [workspace]), undefined);
  });

  it('refuses a relative program path, which names a different file in every cwd', () => {
    const workspace = hostileWorkspace();
    inFolder(workspace, () => {
      assert.strictEqual(findProgram('./agentls', {}, []), undefined);
      assert.strictEqual(findProgram('bin/agentls', {}, []), undefined);
    });
  });

  it('tells links into a folder from the folder’s neighbours', () => {
    const workspace = folder();
    const neighbour = `${workspace}-other`;
    fs.mkdirSync(neighbour);
    fs.symlinkSync(workspace, path.join(neighbour, 'link'));
    assert.ok(inside(path.join(workspace, 'a', 'b'), workspace));
    assert.ok(inside(path.join(neighbour, 'link'), workspace));
    assert.ok(!inside(neighbour, workspace), 'a folder whose name starts the same is not inside');
  });
});

describe('how the server starts', () => {
  function launchFor(workspace: string): Launch {
    return { cwd: privateFolder(folder('agentls-storage-')), env: { PATH: '/usr/bin' }, folders: [workspace] };
  }

  it('starts in a private folder of the storage, empty', () => {
    const storage = folder('agentls-storage-');
    const cwd = privateFolder(storage);
    assert.ok(inside(cwd, storage));
    assert.deepStrictEqual(fs.readdirSync(cwd), []);
    assert.strictEqual(privateFolder(storage), cwd, 'the same folder each start');
  });

  it('gives the program by absolute path and a cwd that is not the workspace', () => {
    const workspace = hostileWorkspace();
    const installed = executable(path.join(folder(), 'agentls'));
    const launch = launchFor(workspace);
    launch.env = { PATH: `.${path.delimiter}${path.dirname(installed)}` };
    const started = inFolder(workspace, () => serverExecutable(['agentls', '--log-file', 'x'], launch));
    assert.ok(started);
    assert.strictEqual(started.command, installed);
    assert.deepStrictEqual(started.args, ['--log-file', 'x']);
    assert.strictEqual(started.options?.cwd, launch.cwd);
    assert.ok(!inside(launch.cwd, workspace));
  });

  it('starts the user’s own command in the private folder too', () => {
    const workspace = hostileWorkspace();
    const python = executable(path.join(folder(), 'python3'));
    const launch = launchFor(workspace);
    const started = serverExecutable([python, '-m', 'agentls'], launch);
    assert.deepStrictEqual(
      { command: started?.command, args: started?.args, cwd: started?.options?.cwd },
      { command: python, args: ['-m', 'agentls'], cwd: launch.cwd },
    );
  });

  it('starts nothing when the program is only in the workspace', () => {
    const workspace = hostileWorkspace();
    const launch = launchFor(workspace);
    launch.env = { PATH: [path.join(workspace, 'bin'), '.'].join(path.delimiter) };
    assert.strictEqual(
      inFolder(workspace, () => serverExecutable(['agentls'], launch)),
      undefined,
    );
  });
});
