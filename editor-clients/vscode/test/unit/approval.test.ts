import * as assert from 'assert';
import { answerApproveCommand } from '../../src/approval';
import type { EditorApi } from '../../src/vscodeApi';

const PARAMS = {
  command: 'pytest -q && rm -rf build',
  cwd: '/project',
  sandboxed: true,
  prompt: 'The agent wants to run a command',
  choices: [
    { id: 'allow', title: 'Allow' },
    { id: 'allow_task', title: 'Allow for this task' },
    { id: 'deny', title: 'Deny' },
  ],
};

/** An EditorApi that answers with `choice` and records what it was asked. */
function fakeApi(choice: string | undefined) {
  const asked: { message: string; detail: string; items: string[] }[] = [];
  const api: EditorApi = {
    askModal: (message, detail, items) => {
      asked.push({ message, detail, items });
      return Promise.resolve(choice);
    },
    showMessage: () => Promise.reject(new Error('an approval is a modal dialog')),
  };
  return { api, asked };
}

function transcript() {
  const lines: string[] = [];
  return { lines, line: (text: string) => lines.push(text) };
}

describe('command approval', () => {
  it("shows the server's prompt, the whole command and its choices; answers the chosen id", async () => {
    for (const { id, title } of PARAMS.choices) {
      const { api, asked } = fakeApi(title);
      const log = transcript();
      assert.deepStrictEqual(await answerApproveCommand(api, log, PARAMS), { choice: id });
      assert.deepStrictEqual(asked, [
        {
          message: 'The agent wants to run a command',
          detail: 'pytest -q && rm -rf build',
          items: ['Allow', 'Allow for this task', 'Deny'],
        },
      ]);
      assert.deepStrictEqual(log.lines, [`  ? pytest -q && rm -rf build  →  ${title}`]);
    }
  });

  it('answers null (deny) when the dialog is dismissed', async () => {
    const { api } = fakeApi(undefined);
    const log = transcript();
    assert.strictEqual(await answerApproveCommand(api, log, PARAMS), null);
    assert.deepStrictEqual(log.lines, ['  ? pytest -q && rm -rf build  →  dismissed (denied)']);
  });
});
