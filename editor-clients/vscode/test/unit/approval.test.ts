import * as assert from 'assert';
import { answerMessageRequest } from '../../src/approval';
import type { EditorApi } from '../../src/vscodeApi';

const ACTIONS = [{ title: 'Allow' }, { title: 'Allow for this task' }, { title: 'Deny' }];

/** An EditorApi that answers with `choice` and records what it was asked. */
function fakeApi(choice: string | undefined) {
  const asked: { kind: string; message: string; detail?: string; items: string[] }[] = [];
  const api: EditorApi = {
    askModal: async (message, detail, items) => {
      asked.push({ kind: 'modal', message, detail, items });
      return choice;
    },
    showMessage: async (kind, message, items) => {
      asked.push({ kind, message, items });
      return choice;
    },
  };
  return { api, asked };
}

function transcript() {
  const lines: string[] = [];
  return { lines, line: (text: string) => lines.push(text) };
}

describe('command approval', () => {
  const params = { type: 2, message: 'The agent wants to run:\npytest -q && rm -rf build', actions: ACTIONS };

  it('shows the whole command with the three actions and answers the chosen one', async () => {
    for (const choice of ['Allow', 'Allow for this task', 'Deny']) {
      const { api, asked } = fakeApi(choice);
      const log = transcript();
      const answer = await answerMessageRequest(api, log, params);
      assert.deepStrictEqual(answer, { title: choice });
      assert.deepStrictEqual(asked, [
        {
          kind: 'modal',
          message: 'The agent wants to run a command',
          detail: 'pytest -q && rm -rf build',
          items: ['Allow', 'Allow for this task', 'Deny'],
        },
      ]);
      assert.deepStrictEqual(log.lines, [`  ? pytest -q && rm -rf build  →  ${choice}`]);
    }
  });

  it('answers null (deny) when the dialog is dismissed', async () => {
    const { api } = fakeApi(undefined);
    const log = transcript();
    assert.strictEqual(await answerMessageRequest(api, log, params), null);
    assert.deepStrictEqual(log.lines, ['  ? pytest -q && rm -rf build  →  dismissed (denied)']);
  });

  it('shows any other request as a plain message of its type', async () => {
    const { api, asked } = fakeApi('Retry');
    const answer = await answerMessageRequest(api, transcript(), {
      type: 1,
      message: 'Something failed',
      actions: [{ title: 'Retry' }],
    });
    assert.deepStrictEqual(answer, { title: 'Retry' });
    assert.deepStrictEqual(asked, [{ kind: 'error', message: 'Something failed', items: ['Retry'] }]);
  });
});
