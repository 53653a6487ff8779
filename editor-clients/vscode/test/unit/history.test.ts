import * as assert from 'assert';
import {
  checkpointItem,
  resumeSession,
  undo,
  undoToCheckpoint,
  type Checkpoint,
  type Pick,
  type ServerCommand,
} from '../../src/history';
import type { EditorApi } from '../../src/vscodeApi';

/** A server that answers each command from `answers` (in order) and records the calls. */
function server(answers: Record<string, unknown[]>) {
  const calls: { command: string; argument?: object }[] = [];
  const send: ServerCommand = async (command, argument) => {
    calls.push(argument === undefined ? { command } : { command, argument });
    const queue = answers[command];
    assert.ok(queue?.length, `unexpected ${command}`);
    return queue.shift();
  };
  return { calls, send };
}

function editor(choice?: string) {
  const shown: string[] = [];
  const api: EditorApi = {
    askModal: async () => undefined,
    showMessage: async (_kind, message) => {
      shown.push(message);
      return choice;
    },
  };
  return { api, shown };
}

const UNDONE = {
  checkpoint: 3,
  restored: ['app.py'],
  removed: ['made.txt'],
  conflicts: [],
  declined: [],
  unrecorded: [],
  outcome: 'undone: 1 file put back, 1 removed',
};
const CHECKPOINT: Checkpoint = {
  id: 4,
  kind: 'step',
  task: 'fix the bug',
  step: 2,
  label: 'bash: make',
  time: 0,
  files: ['a.py', 'b.py'],
  description: 'fix the bug (step 2: bash: make; 2 files differ)',
};

describe('undo and resume', () => {
  it('Undo Last Task asks the server with no argument and shows its words for what was undone', async () => {
    const { calls, send } = server({ 'agent.undo': [UNDONE] });
    const { api, shown } = editor();
    const lines: string[] = [];
    assert.deepStrictEqual(await undo(api, send, (text) => lines.push(text)), UNDONE);
    assert.deepStrictEqual(calls, [{ command: 'agent.undo' }]);
    assert.deepStrictEqual(lines, ['Undo to checkpoint 3: undone: 1 file put back, 1 removed']);
    assert.deepStrictEqual(shown, ['Agent: undone: 1 file put back, 1 removed']);
  });

  it('files changed since are overwritten only when the user says so', async () => {
    const conflict = { ...UNDONE, restored: [], removed: [], conflicts: ['app.py'], outcome: 'x' };
    const overwritten = { ...UNDONE, removed: [] };
    const again = { command: 'agent.undo', argument: { id: 3, overwrite: ['app.py'] } };
    for (const [choice, expected] of [
      ['Overwrite Them', [{ command: 'agent.undo' }, again]],
      ['Keep Mine', [{ command: 'agent.undo' }]],
      [undefined, [{ command: 'agent.undo' }]],
    ] as const) {
      const { calls, send } = server({ 'agent.undo': [conflict, overwritten] });
      const { api, shown } = editor(choice);
      await undo(api, send, () => undefined);
      assert.deepStrictEqual(calls, expected);
      assert.strictEqual(shown[0], 'Agent: changed since the checkpoint, so not undone: app.py');
    }
  });

  it('the checkpoint picker shows the server\'s words and the files, and undoes to the pick', async () => {
    const { calls, send } = server({ 'agent.checkpoints': [[CHECKPOINT]], 'agent.undo': [UNDONE] });
    let offered: unknown[] = [];
    const pick: Pick = async (items) => {
      offered = items;
      return items[0];
    };
    await undoToCheckpoint(editor().api, pick, send, () => undefined);
    const item = checkpointItem(CHECKPOINT);
    assert.deepStrictEqual(offered, [item]);
    assert.strictEqual(item.label, 'fix the bug (step 2: bash: make; 2 files differ)');
    assert.strictEqual(item.detail, 'a.py, b.py');
    assert.deepStrictEqual(calls[1], { command: 'agent.undo', argument: { id: 4 } });
  });

  it('a dismissed picker undoes nothing', async () => {
    const { calls, send } = server({ 'agent.checkpoints': [[CHECKPOINT]] });
    assert.strictEqual(await undoToCheckpoint(editor().api, async () => undefined, send, () => undefined), undefined);
    assert.deepStrictEqual(calls, [{ command: 'agent.checkpoints' }]);
  });

  it('Resume Session lists the saved sessions and resumes the chosen one', async () => {
    const description = '“fix the bug” (2 tasks, 5 minutes ago)';
    const saved = { id: '20261130-a', title: 'fix the bug', updated: 0, tasks: 2, current: false, description };
    const { calls, send } = server({ 'agent.sessions': [[saved]], 'agent.resumeSession': [saved] });
    const lines: string[] = [];
    const resumed = await resumeSession(editor().api, async (items) => items[0], send, (text) => lines.push(text));
    assert.deepStrictEqual(resumed, saved);
    assert.deepStrictEqual(calls, [
      { command: 'agent.sessions' },
      { command: 'agent.resumeSession', argument: { id: '20261130-a' } },
    ]);
    assert.deepStrictEqual(lines, ['Resumed “fix the bug” (2 tasks, 5 minutes ago).']);
  });
});
