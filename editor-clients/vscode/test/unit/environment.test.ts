import * as assert from 'assert';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { bundledWheel, existingEnvironment, NoPython, usablePython } from '../../src/environment';

function folder(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-env-'));
}

/** An environment as makeEnvironment leaves it, made from `wheel`'s current bytes. */
function madeFrom(storage: string, stampText: string): void {
  const bin = path.join(storage, 'env', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'python'), '', { mode: 0o755 });
  fs.writeFileSync(path.join(storage, 'env', 'agentls-wheel.txt'), stampText);
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
    madeFrom(storage, `agentls-0.1.0-py3-none-any.whl ${digest}\n`);
    assert.deepStrictEqual(existingEnvironment(storage, wheel), [path.join(storage, 'env', 'bin', 'python'), '-m', 'agentls']);
    fs.writeFileSync(wheel, 'a rebuild with the same version');
    assert.strictEqual(existingEnvironment(storage, wheel), undefined, 'another wheel: made again');
  });

  it('says what to install when there is no usable Python', async () => {
    const notPython = path.join(folder(), 'python3');
    fs.writeFileSync(notPython, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    await assert.rejects(usablePython(['/nonexistent/python3', notPython]), (error: Error) => {
      assert.ok(error instanceof NoPython);
      assert.match(error.message, /Python 3\.10 or newer/);
      assert.match(error.message, /apt install python3 python3-venv/);
      assert.match(error.message, /agentls\.server\.command/);
      return true;
    });
  });

  it('takes a Python that can make a venv', async () => {
    assert.strictEqual(await usablePython(['/nonexistent/python3', 'python3']), 'python3');
  });
});
