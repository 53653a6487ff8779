// The "Agent Tasks" view and the background task commands: start one (the palette, the
// Chat view's /background), see them (status, a spinner while one runs, cost), and act on
// one: Open Log, Cancel, Review, Discard.
import * as vscode from 'vscode';
import { active, type BackgroundTask, BackgroundTasks, reviewOutcome, row } from './backgroundTasks';
import type { ServerCommand } from './history';
import { taskArguments } from './progress';

export class TasksView implements vscode.TreeDataProvider<BackgroundTask>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly tasks: BackgroundTasks) {
    tasks.onChange(() => this.changed.fire());
  }

  getTreeItem(task: BackgroundTask): vscode.TreeItem {
    const shown = row(task);
    const item = new vscode.TreeItem(shown.label);
    item.id = task.id;
    item.description = shown.description;
    item.iconPath = new vscode.ThemeIcon(shown.icon);
    item.contextValue = shown.context;
    item.tooltip = [task.task, `branch ${task.branch}`, task.error ?? ''].filter(Boolean).join('\n');
    return item;
  }

  getChildren(task?: BackgroundTask): BackgroundTask[] {
    return task ? [] : this.tasks.items;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

function failure(error: unknown): void {
  void vscode.window.showErrorMessage(`Agent: ${error instanceof Error ? error.message : String(error)}`);
}

/** Ask for a task (unless given) and start it in the background; its id, or undefined. */
export async function runInBackground(
  send: ServerCommand,
  tasks: BackgroundTasks,
  given?: string,
): Promise<{ id: string; branch: string } | undefined> {
  const task =
    given ??
    (await vscode.window.showInputBox({
      title: 'Agent: Run Task in Background',
      prompt: 'What should the agent do, in a worktree of its own, while you keep working?',
      placeHolder: 'e.g. add a --json flag to the CLI',
      ignoreFocusOut: true,
    }));
  if (!task?.trim()) {
    return undefined;
  }
  try {
    const started = (await send('agent.runInBackground', taskArguments(task.trim()))) as { id: string; branch: string };
    await refresh(send, tasks);
    void vscode.window.showInformationMessage(`Agent: running in the background on ${started.branch}.`);
    return started;
  } catch (error) {
    failure(error);
    return undefined;
  }
}

export async function refresh(send: ServerCommand, tasks: BackgroundTasks): Promise<void> {
  try {
    tasks.replace((await send('agent.backgroundTasks')) as BackgroundTask[]);
  } catch (error) {
    failure(error);
  }
}

/** The actions of a task's row, by command id. */
export function registerTaskCommands(send: ServerCommand, tasks: BackgroundTasks): vscode.Disposable[] {
  const chosen = async (task?: BackgroundTask): Promise<BackgroundTask | undefined> => {
    if (task) {
      return task;
    }
    const items = tasks.items.map((t) => ({ label: row(t).label, description: row(t).description, task: t }));
    return (await vscode.window.showQuickPick(items, { title: 'Agent: background tasks' }))?.task;
  };
  return [
    vscode.commands.registerCommand('agentls.runInBackground', () => runInBackground(send, tasks)),
    vscode.commands.registerCommand('agentls.tasks.refresh', () => refresh(send, tasks)),
    vscode.commands.registerCommand('agentls.tasks.openLog', async (given?: BackgroundTask) => {
      const task = await chosen(given);
      if (!task) {
        return;
      }
      try {
        // The server's transcript (`agentls tasks log`'s text), not the raw log.jsonl.
        const log = (await send('agent.backgroundTaskLog', { id: task.id })) as { text: string };
        const document = await vscode.workspace.openTextDocument({ content: log.text, language: 'plaintext' });
        await vscode.window.showTextDocument(document, { preview: true });
      } catch (error) {
        failure(error);
      }
    }),
    vscode.commands.registerCommand('agentls.tasks.cancel', async (given?: BackgroundTask) => {
      const task = await chosen(given);
      if (task && active(task)) {
        await send('agent.cancelBackgroundTask', { id: task.id }).catch(failure);
      }
    }),
    vscode.commands.registerCommand('agentls.tasks.review', async (given?: BackgroundTask) => {
      const task = await chosen(given);
      if (!task) {
        return;
      }
      try {
        const result = (await send('agent.reviewBackgroundTask', { id: task.id })) as Parameters<typeof reviewOutcome>[0];
        void vscode.window.showInformationMessage(`Agent: ${reviewOutcome(result)}. Agent: Undo Last Task takes it back.`);
      } catch (error) {
        failure(error);
      }
      await refresh(send, tasks);
    }),
    vscode.commands.registerCommand('agentls.tasks.discard', async (given?: BackgroundTask) => {
      const task = await chosen(given);
      if (!task) {
        return;
      }
      const sure = await vscode.window.showWarningMessage(
        `Discard "${row(task).label}"? Its worktree and its branch ${task.branch} are removed.`,
        { modal: true },
        'Discard',
      );
      if (sure === 'Discard') {
        await send('agent.discardBackgroundTask', { id: task.id }).catch(failure);
        tasks.remove(task.id);
      }
    }),
  ];
}
