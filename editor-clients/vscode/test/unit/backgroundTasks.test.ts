import * as assert from 'assert';
import { type BackgroundTask, BackgroundTasks, reviewOutcome, row } from '../../src/backgroundTasks';

function task(overrides: Partial<BackgroundTask>): BackgroundTask {
  return {
    id: 'a1',
    task: 'Add a --json flag\nand tests',
    title: 'Add a --json flag',
    status: 'running',
    steps: 0,
    tokens: 0,
    cost: null,
    created: 1,
    started: 2,
    ended: null,
    branch: 'agentls/background/a1',
    worktree: '/tmp/tree',
    error: null,
    reviewed: false,
    files: [],
    log: '/tmp/log.jsonl',
    ...overrides,
  };
}

describe('background tasks', () => {
  it('shows a running task with a spinner and Cancel', () => {
    assert.deepStrictEqual(row(task({ steps: 3 })), {
      label: 'Add a --json flag',
      description: 'running · 3 steps',
      icon: 'loading~spin',
      context: 'agentlsTask.active',
    });
  });

  it('offers Review once a task ended with a change, not after it was reviewed', () => {
    const done = task({ status: 'done', steps: 5, cost: 0.0123, files: ['app.py'] });
    assert.deepStrictEqual(row(done), {
      label: 'Add a --json flag',
      description: 'done · 5 steps · $0.0123 · 1 file',
      icon: 'pass',
      context: 'agentlsTask.reviewable',
    });
    assert.strictEqual(row({ ...done, reviewed: true }).context, 'agentlsTask.ended');
    assert.strictEqual(row({ ...done, reviewed: true }).icon, 'check-all');
    assert.strictEqual(row(task({ status: 'queued' })).icon, 'clock');
  });

  it('keeps the latest of each task, newest first', () => {
    const tasks = new BackgroundTasks();
    let told = 0;
    tasks.onChange(() => told++);
    tasks.replace([task({ id: 'old', created: 1 }), task({ id: 'new', created: 5 })]);
    tasks.update(task({ id: 'old', created: 1, status: 'done' }));
    assert.deepStrictEqual(
      tasks.items.map((t) => [t.id, t.status]),
      [
        ['new', 'running'],
        ['old', 'done'],
      ],
    );
    tasks.remove('new');
    assert.deepStrictEqual(
      tasks.items.map((t) => t.id),
      ['old'],
    );
    assert.strictEqual(told, 3);
  });

  it('words a review: what landed, what conflicted', () => {
    const result = {
      files: [
        { path: 'app.py', hunks: 3, accepted: 1 },
        { path: 'new.md', hunks: 1, accepted: 1 },
      ],
      conflicts: ['change of line 18 of app.py: you changed those lines since the task started'],
      binary: [],
    };
    assert.strictEqual(
      reviewOutcome(result),
      '2 of 4 changes applied. not applied (you changed those lines): change of line 18 of app.py: you changed those lines since the task started',
    );
  });
});
