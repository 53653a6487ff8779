import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BadServerCommand, findProgram, SERVER_SETTINGS, serverCommand, serverSettings } from '../../src/settings';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8'));
const contributed: Record<string, { default: unknown }> = manifest.contributes.configuration.properties;

describe('settings', () => {
  it('sends every contributed setting but the client’s own', () => {
    // The contributed names and defaults are held to the server's by tests/config/test_settings_contract.py.
    assert.ok(SERVER_SETTINGS.includes('maxSteps') && SERVER_SETTINGS.includes('prices'));
    assert.ok(!SERVER_SETTINGS.includes('server.command') && !SERVER_SETTINGS.includes('trace.server'));
    assert.strictEqual(SERVER_SETTINGS.length, Object.keys(contributed).length - 2);
    assert.strictEqual(contributed['agentls.server.command'].default, null);
  });

  it('sends the server only its own settings', () => {
    const values: Record<string, unknown> = { maxSteps: 7, 'server.command': ['x'], 'trace.server': 'off' };
    const sent = serverSettings((name) => values[name]);
    assert.deepStrictEqual(sent, { maxSteps: 7 });
  });

  it('reads the server command, unset by default, refusing a bad one', () => {
    assert.strictEqual(serverCommand(() => undefined), undefined);
    assert.strictEqual(serverCommand(() => null), undefined);
    assert.deepStrictEqual(serverCommand(() => ['/v/bin/python', '-m', 'agentls']), ['/v/bin/python', '-m', 'agentls']);
    for (const bad of ['agentls', [], [''], [1]]) {
      assert.throws(() => serverCommand(() => bad), BadServerCommand);
    }
  });

  it('finds the program on PATH or by path, and reports a missing one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-path-'));
    const program = path.join(dir, 'agentls');
    fs.writeFileSync(program, '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'plain'), 'not executable', { mode: 0o644 });
    assert.strictEqual(findProgram('agentls', { PATH: `/nonexistent${path.delimiter}${dir}` }), program);
    assert.strictEqual(findProgram(program, {}), program);
    assert.strictEqual(findProgram('./agentls', {}, dir), program);
    assert.strictEqual(findProgram('plain', { PATH: dir }), undefined);
    assert.strictEqual(findProgram('agentls', { PATH: '/nonexistent' }), undefined);
  });
});
