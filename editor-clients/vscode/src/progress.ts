// Running a task: the progress notification (with Cancel), the status-bar item, and the
// transcript of streamed text, steps and the end.
import { randomUUID } from 'crypto';
import type { TaskImage } from './images';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  type LanguageClient,
  WorkDoneProgress,
  type WorkDoneProgressBegin,
  WorkDoneProgressCancelNotification,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import type { Plan } from './plan';
import type { AgentServer } from './server';
import type { TaskListener } from './taskEvents';
import type { TaskResult, Transcript } from './transcript';

export interface TaskArguments {
  task: string;
  uri?: string;
  selection?: { start: vscode.Position; end: vscode.Position };
  images?: TaskImage[];
}

/** The task with the active file and its selection, when the editor shows a file. */
export function taskArguments(task: string, images: TaskImage[] = []): TaskArguments {
  const withImages = images.length > 0 ? { images } : {};
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== 'file') {
    return { task, ...withImages };
  }
  const { start, end } = editor.selection;
  return { task, uri: editor.document.uri.toString(), selection: { start, end }, ...withImages };
}

/** A task started from a chat request. */
export interface ChatTask {
  listener: TaskListener;
  cancel: vscode.CancellationToken;
}

export class TaskProgress implements vscode.Disposable {
  private readonly status: vscode.StatusBarItem;
  private taskRunning = false;

  constructor(
    private readonly server: AgentServer,
    private readonly transcript: Transcript,
    private readonly channel: vscode.OutputChannel,
    private readonly plan: Plan,
  ) {
    this.status = vscode.window.createStatusBarItem('agentls.status', vscode.StatusBarAlignment.Left, 50);
    this.status.name = 'Agent';
    this.status.command = 'agentls.showLog';
  }

  get running(): boolean {
    return this.taskRunning;
  }

  /**
   * Runs a task; from the palette with a progress notification (its Cancel stops the task),
   * from a chat request with `chat`: its listener hears the task, its token cancels it, and
   * an error is thrown to it instead of shown.
   */
  async run(args: TaskArguments, chat?: ChatTask): Promise<TaskResult | undefined> {
    // One token for the request and for the Cancel button, so Cancel stops this task.
    const token = `agentls-vscode-${randomUUID()}`;
    this.taskRunning = true;
    this.plan.update([]); // a plan belongs to its task
    this.transcript.started(args.task, args.uri && vscode.workspace.asRelativePath(vscode.Uri.parse(args.uri)));
    this.showStatus('$(sync~spin)', 'starting');
    const listening = chat && this.server.events.listen(token, chat.listener);
    try {
      const client = await this.server.ready();
      if (chat) {
        return await this.request(client, args, token, undefined, chat.cancel);
      }
      this.channel.show(true);
      return await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Agent', cancellable: true },
        (progress, cancel) => this.request(client, args, token, progress, cancel),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.transcript.line(`■ error: ${message}`);
      this.showStatus('$(error)', 'error');
      if (chat) {
        throw error;
      }
      void vscode.window.showErrorMessage(`Agent: ${message}`);
      return undefined;
    } finally {
      listening?.dispose();
      this.taskRunning = false;
    }
  }

  private async request(
    client: LanguageClient,
    args: TaskArguments,
    token: string,
    progress: vscode.Progress<{ message?: string }> | undefined,
    cancel: vscode.CancellationToken,
  ): Promise<TaskResult> {
    const onProgress = client.onProgress(WorkDoneProgress.type, token, (value) => this.reported(value, progress));
    const onCancel = cancel.onCancellationRequested(
      () => void client.sendNotification(WorkDoneProgressCancelNotification.type, { token }),
    );
    try {
      const result: TaskResult = await client.sendRequest(ExecuteCommandRequest.type, {
        command: 'agent.runTask',
        arguments: [args],
        workDoneToken: token,
      });
      this.transcript.ended(result);
      this.showStatus(result.status === 'done' ? '$(check)' : '$(warning)', result.status);
      return result;
    } finally {
      onProgress.dispose();
      onCancel.dispose();
    }
  }

  private reported(
    value: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd,
    progress: vscode.Progress<{ message?: string }> | undefined,
  ): void {
    if (value.message) {
      progress?.report({ message: value.message });
      if (value.kind !== 'end') {
        this.showStatus('$(sync~spin)', value.message);
      }
    }
  }

  private showStatus(icon: string, message: string): void {
    this.status.text = `${icon} Agent: ${message.split('\n')[0].slice(0, 60)}`;
    this.status.tooltip = `${message}\nClick to show the transcript.`;
    this.status.show();
  }

  dispose(): void {
    this.status.dispose();
  }
}
