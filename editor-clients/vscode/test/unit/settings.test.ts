import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { BadServerCommand, SERVER_SETTINGS, serverCommand, serverSettings } from '../../src/settings';

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

  it('refuses a relative program, since the server does not start in the workspace', () => {
    assert.deepStrictEqual(serverCommand(() => ['agentls', '--tcp']), ['agentls', '--tcp']);
    for (const relative of ['./agentls', '.venv/bin/agentls', '../agentls/.venv/bin/python']) {
      assert.throws(() => serverCommand(() => [relative]), (error: Error) => {
        assert.ok(error instanceof BadServerCommand);
        assert.match(error.message, /relative path: give its absolute path/);
        return true;
      });
    }
  });
});
