import * as assert from 'assert';
import { DiagnosticsSettle } from '../../src/diagnosticsSettle';

const APP = 'file:///work/app.ts';
const BEFORE = JSON.stringify([{ message: "Type 'string' is not assignable to type 'number'." }]);
const AFTER = JSON.stringify([
  { message: "Type 'string' is not assignable to type 'number'." },
  { message: "Cannot find name 'someone'." },
]);

/** How long `settled` took to resolve, in ms. */
async function waited(settle: DiagnosticsSettle, uris: string[], ms: number): Promise<number> {
  const started = Date.now();
  await settle.settled(uris, ms);
  return Date.now() - started;
}

describe('diagnostics settle', () => {
  it('answers at once for a document not changed since its last report', async () => {
    const settle = new DiagnosticsSettle();
    settle.reported(APP, BEFORE);
    assert.ok((await waited(settle, [APP], 5000)) < 1000);
  });

  it('waits for the report of the change, not the old text reported again after it', async () => {
    // TypeScript re-checks the old text when the review's diff closes; that report came just
    // after the accepted edit, and the edit's result missed the new error.
    const settle = new DiagnosticsSettle();
    settle.changed(APP, BEFORE);
    let done = false;
    const answer = settle.settled([APP], 5000).then(() => (done = true));
    settle.reported(APP, BEFORE);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.strictEqual(done, false, 'the old text reported again is not the change caught up');
    assert.strictEqual(settle.caughtUp(APP), false);
    settle.reported(APP, AFTER);
    await answer;
    assert.ok(settle.caughtUp(APP));
  });

  it('gives up after its bound: an edit that changed no diagnostic looks the same', async () => {
    const settle = new DiagnosticsSettle();
    settle.changed(APP, BEFORE);
    settle.reported(APP, BEFORE);
    const took = await waited(settle, [APP], 100);
    assert.ok(took >= 90, `resolved after ${took} ms`);
  });

  it('waits for every document asked of, and a later change again', async () => {
    const lib = 'file:///work/lib.ts';
    const settle = new DiagnosticsSettle();
    settle.changed(APP, BEFORE);
    settle.changed(lib, '[]');
    let done = false;
    const answer = settle.settled([APP, lib], 5000).then(() => (done = true));
    settle.reported(APP, AFTER);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.strictEqual(done, false, 'lib.ts has not caught up');
    settle.reported(lib, JSON.stringify([{ message: 'unused' }]));
    await answer;
    settle.changed(APP, AFTER);
    assert.strictEqual(settle.caughtUp(APP), false);
  });
});
