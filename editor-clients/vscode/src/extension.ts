// Activation: the Agent commands, the review, and the server (restarted on settings change).
import * as vscode from 'vscode';
import { resumeSession, undo, undoToCheckpoint, type Pick, type ServerCommand } from './history';
import type { TaskImage } from './images';
import { Plan } from './plan';
import { PlanView } from './planView';
import { ChatParticipant } from './chatParticipant';
import { AgentModelProvider, VENDOR } from './languageModel';
import { taskArguments, TaskProgress } from './progress';
import { Reviewer } from './review';
import { AgentServer } from './server';
import { SECTION } from './settings';
import { Transcript } from './transcript';
import { BackgroundTasks } from './backgroundTasks';
import { refresh, registerTaskCommands, TasksView } from './tasksView';
import { realEditorApi } from './vscodeApi';

let server: AgentServer | undefined;

async function runTask(progress: TaskProgress): Promise<void> {
  if (progress.running) {
    void vscode.window.showInformationMessage('An agent task is already running. Agent: Cancel stops it.');
    return;
  }
  const editor = vscode.window.activeTextEditor;
  const where = editor && !editor.selection.isEmpty ? ' (about the selection)' : '';
  const images: TaskImage[] = [];
  const box = vscode.window.createInputBox();
  box.title = 'Agent: Run Task';
  box.prompt = `What should the agent do?${where}`;
  box.placeholder = 'e.g. add type hints to this function';
  box.ignoreFocusOut = true;
  const attach: vscode.QuickInputButton = {
    iconPath: new vscode.ThemeIcon('file-media'),
    tooltip: 'Attach an image (PNG, JPEG, GIF, WebP) for the agent to see',
  };
  box.buttons = [attach];
  const task = await new Promise<string | undefined>((resolve) => {
    box.onDidTriggerButton(async () => {
      const picked = await vscode.window.showOpenDialog({
        canSelectMany: true,
        openLabel: 'Attach',
        filters: { Images: ['png', 'jpg', 'jpeg', 'gif', 'webp'] },
      });
      images.push(...(picked ?? []).map((uri) => ({ uri: uri.toString() })));
      box.prompt = `What should the agent do?${where} (${images.length} image(s) attached)`;
      box.show(); // the dialog took the focus; the task is still to be typed
    });
    box.onDidAccept(() => {
      resolve(box.value);
      box.hide();
    });
    box.onDidHide(() => resolve(undefined));
    box.show();
  });
  box.dispose();
  if (task?.trim()) {
    await progress.run(taskArguments(task.trim(), images));
  }
}

async function addToRunningTask(agent: AgentServer, progress: TaskProgress, transcript: Transcript) {
  if (!progress.running) {
    void vscode.window.showInformationMessage('No agent task is running; Agent: Run Task starts one.');
    return;
  }
  const text = (
    await vscode.window.showInputBox({
      title: 'Agent: Add to Running Task',
      prompt: 'What should the agent also know or do? It reads this at its next step.',
      ignoreFocusOut: true,
    })
  )?.trim();
  if (!text) {
    return;
  }
  try {
    const client = await agent.ready();
    await client.sendRequest('workspace/executeCommand', { command: 'agent.steer', arguments: [{ text }] });
    transcript.added(text);
  } catch (error) {
    void vscode.window.showErrorMessage(`Agent: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function serverCommand(agent: AgentServer, command: string, done: (result: unknown) => string) {
  try {
    const result = await (await agent.ready()).sendRequest('workspace/executeCommand', { command, arguments: [] });
    void vscode.window.showInformationMessage(done(result));
  } catch (error) {
    void vscode.window.showErrorMessage(`Agent: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A history command (undo, resume): refused while a task runs, errors shown. */
async function historyCommand(progress: TaskProgress, action: () => Promise<unknown>): Promise<void> {
  if (progress.running) {
    void vscode.window.showInformationMessage('An agent task is running; wait for it or cancel it first.');
    return;
  }
  try {
    await action();
  } catch (error) {
    void vscode.window.showErrorMessage(`Agent: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const pick: Pick = (items, title) => vscode.window.showQuickPick(items, { title, matchOnDescription: true });

export function activate(context: vscode.ExtensionContext): void {
  const channel = vscode.window.createOutputChannel('Agent');
  const transcript = new Transcript(channel);
  const reviewer = new Reviewer();
  const plan = new Plan();
  const planView = new PlanView(plan);
  const agent = new AgentServer(context, realEditorApi(), reviewer, transcript, plan);
  const progress = new TaskProgress(agent, transcript, channel, plan);
  const api = realEditorApi();
  const send: ServerCommand = async (command, argument) =>
    (await agent.ready()).sendRequest('workspace/executeCommand', {
      command,
      arguments: argument === undefined ? [] : [argument],
    });
  const line = (text: string) => transcript.line(text);
  const models = new AgentModelProvider(agent, String(context.extension.packageJSON.version));
  server = agent;
  const tasks = new BackgroundTasks();
  const tasksView = new TasksView(tasks);
  // Commands first, so the palette has them while the server starts (or fails to).
  context.subscriptions.push(
    channel,
    agent,
    agent.nextEdits.register(),
    progress,
    planView,
    vscode.window.createTreeView('agentls.plan', { treeDataProvider: planView }),
    tasksView,
    vscode.window.createTreeView('agentls.tasks', { treeDataProvider: tasksView }),
    agent.backgroundTask.event((task) => tasks.update(task)),
    ...registerTaskCommands(send, tasks),
    reviewer.register(),
    vscode.commands.registerCommand('agentls.runTask', () => runTask(progress)),
    vscode.commands.registerCommand('agentls.steer', () => addToRunningTask(agent, progress, transcript)),
    vscode.commands.registerCommand('agentls.cancel', () =>
      serverCommand(agent, 'agent.cancel', (result) =>
        (result as { cancelled?: boolean } | null)?.cancelled
          ? 'Agent: cancelling the task.'
          : 'Agent: no task is running.',
      ),
    ),
    vscode.commands.registerCommand('agentls.newSession', () =>
      serverCommand(agent, 'agent.newSession', () => 'Agent: new session; the agent forgets earlier tasks.'),
    ),
    vscode.commands.registerCommand('agentls.undoLastTask', () =>
      historyCommand(progress, () => undo(api, send, line)),
    ),
    vscode.commands.registerCommand('agentls.undoToCheckpoint', () =>
      historyCommand(progress, () => undoToCheckpoint(api, pick, send, line)),
    ),
    vscode.commands.registerCommand('agentls.resumeSession', () =>
      historyCommand(progress, () => resumeSession(api, pick, send, line)),
    ),
    vscode.commands.registerCommand('agentls.undoTask', (id: number) =>
      historyCommand(progress, () => undo(api, send, line, id)),
    ),
    vscode.commands.registerCommand('agentls.showLog', () => channel.show()),
    new ChatParticipant(progress, reviewer, send, tasks).register(context.extensionUri),
    vscode.lm.registerLanguageModelChatProvider(VENDOR, models),
    vscode.commands.registerCommand('agentls.restartServer', () => agent.restart()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) {
        void agent.restart();
      }
    }),
  );
  // The Chat view lists a vendor's models only once someone asked for them.
  void vscode.lm.selectChatModels({ vendor: VENDOR });
  // The tasks of earlier sessions (they outlive the server and the editor), once it runs.
  void agent.start().then(() => refresh(send, tasks));
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
