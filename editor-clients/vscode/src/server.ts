// Starting, restarting and stopping the agentls server, with the handlers for what the
// server asks of the editor (reviews, approvals) and tells it (streamed text, steps, plan).
import * as path from 'path';
import * as vscode from 'vscode';
import type { BackgroundTask } from './backgroundTasks';
import {
  ApplyWorkspaceEditRequest,
  type ClientCapabilities,
  LanguageClient,
  type LanguageClientOptions,
  State,
  type StaticFeature,
} from 'vscode-languageclient/node';
import {
  answerApproveCommand,
  APPROVE_COMMAND,
  type ApproveCommandParams,
  EXPERIMENTAL_CAPABILITIES,
} from './approval';
import { answerElicit, ELICIT, ELICIT_CAPABILITIES, type ElicitParams } from './elicit';
import { CAPABILITIES, Eyes } from './eyes';
import { NextEditView } from './nextEditView';
import type { Plan, PlanParams } from './plan';
import type { Reviewer } from './review';
import { bundledWheel, existingEnvironment, makeEnvironment, NoPython } from './environment';
import { findProgram, type Launch, privateFolder, serverExecutable } from './launch';
import { pythonExtensionInterpreter } from './pythonExtension';
import { BadServerCommand, SECTION, SERVER_PROGRAM, serverCommand, serverSettings } from './settings';
import type { SubagentParams } from './subagentParts';
import { TaskEvents } from './taskEvents';
import type { StepParams, Transcript } from './transcript';
import { type EditorApi, realFormApi } from './vscodeApi';

/** What the user set (in any scope), never the manifest's default: a key left unset here
 * comes from ~/.config/agentls/settings.json, else from the server's own default. */
function setting(name: string): unknown {
  const config = vscode.workspace.getConfiguration(SECTION);
  const set = config.inspect(name);
  const scopes = [set?.globalValue, set?.workspaceValue, set?.workspaceFolderValue];
  return scopes.some((value) => value !== undefined) ? config.get(name) : undefined;
}

/** Tells the server, in `capabilities.experimental`, which agentls requests we answer. */
const agentlsCapabilities: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    // The approval request and the editor's-eyes requests this extension answers.
    const experimental = capabilities.experimental ?? {};
    capabilities.experimental = {
      ...experimental,
      agentls: {
        ...experimental.agentls,
        ...EXPERIMENTAL_CAPABILITIES.agentls,
        ...CAPABILITIES,
        ...ELICIT_CAPABILITIES,
      },
    };
  },
  getState: () => ({ kind: 'static' }),
  initialize(): void {},
  clear(): void {},
};

export class AgentServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> = Promise.resolve();
  private readonly log: vscode.LogOutputChannel;
  private readonly eyes = new Eyes();
  /** The server's next edits away from the cursor, which VS Code's ghost text cannot show. */
  readonly nextEdits = new NextEditView();
  /** Listeners for the streamed text, steps and plan of one task or chat, by token. */
  readonly events = new TaskEvents();
  /** Told of each `agent/backgroundTask` (a background task changed). */
  readonly backgroundTask = new vscode.EventEmitter<BackgroundTask>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly api: EditorApi,
    private readonly reviewer: Reviewer,
    private readonly transcript: Transcript,
    private readonly plan: Plan,
  ) {
    this.log = vscode.window.createOutputChannel('Agent Server', { log: true });
  }

  /** The client once a start under way has finished; an error if the server is not running. */
  async ready(): Promise<LanguageClient> {
    await this.starting.catch(() => undefined);
    return this.running();
  }

  private running(): LanguageClient {
    if (!this.client || this.client.state !== State.Running) {
      throw new Error(
        'The agentls server is not running. Run "Agent: Restart Server", or see the "Agent Server" output.',
      );
    }
    return this.client;
  }

  start(): Promise<void> {
    this.starting = this.launch();
    return this.starting;
  }

  /** Where this start's programs start (the extension's own folder) and which folders they
   * may not come from (the workspace's). */
  private launchSettings(): Launch {
    return {
      cwd: privateFolder(this.context.globalStorageUri.fsPath),
      env: process.env,
      folders: (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath),
    };
  }

  private async launch(): Promise<void> {
    let command: string[] | undefined;
    let launch: Launch;
    try {
      launch = this.launchSettings();
      command = serverCommand(setting) ?? (await this.defaultCommand(launch));
    } catch (error) {
      if (error instanceof BadServerCommand || error instanceof NoPython) {
        void this.offerSettings(error.message);
        return;
      }
      this.log.error(`agentls's environment could not be made: ${String(error)}`);
      void this.offerSettings(`agentls could not set up its Python environment: ${String(error)}`);
      return;
    }
    if (!command) {
      return;
    }
    // The user's agentls.server.command too starts in the private folder: the server learns
    // its workspace from initialize, never from its cwd.
    const executable = serverExecutable(command, launch);
    if (!executable) {
      // Not awaited: Run Task would wait on the start until the message is dismissed.
      void this.reportMissing(command[0]);
      return;
    }
    const client = new LanguageClient('agentls', 'agentls', executable, this.clientOptions());
    client.onRequest(ApplyWorkspaceEditRequest.type, (params, token) => this.reviewer.review(params, token));
    client.registerFeature(agentlsCapabilities);
    client.onRequest(APPROVE_COMMAND, (params: ApproveCommandParams) =>
      answerApproveCommand(this.api, this.transcript, params),
    );
    client.onRequest(ELICIT, (params: ElicitParams) => answerElicit(realFormApi(), this.transcript, params));
    client.onNotification('agent/text', (params: { token?: unknown; text: string; subagent?: string }) => {
      if (params.subagent) {
        return; // a subagent's words are its own: what it found comes back in its step's end
      }
      const listener = this.events.of(params.token);
      listener?.text?.(params.text);
      if (!listener?.quiet) {
        this.transcript.text(params.text);
      }
    });
    client.onNotification('agent/step', (params: StepParams) => {
      this.events.of(params.token)?.step?.(params);
      this.transcript.step(params);
    });
    client.onNotification('agent/subagent', (params: SubagentParams) => {
      this.events.of(params.token)?.subagent?.(params);
      this.transcript.subagent(params);
    });
    client.onRequest('agent/diagnostics', (params) => this.eyes.diagnostics(params));
    client.onRequest('agent/definition', (params) => this.eyes.locations('vscode.executeDefinitionProvider', params));
    client.onRequest('agent/references', (params) => this.eyes.locations('vscode.executeReferenceProvider', params));
    client.onRequest('agent/symbols', (params: { query: string }) => this.eyes.symbols(params));
    client.onNotification('agent/plan', (params: PlanParams) => {
      this.events.of(params.token)?.plan?.(params.items);
      this.plan.update(params.items);
      this.transcript.plan(params.items);
    });
    client.onNotification('agent/backgroundTask', (params: BackgroundTask) => this.backgroundTask.fire(params));
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.log.error(`agentls did not start: ${String(error)}`);
      void this.api.showMessage('error', `agentls did not start: ${String(error)}`, []);
    }
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.log,
      initializationOptions: () => ({ [SECTION]: serverSettings(setting) }),
      middleware: {
        // vscode-languageclient registers VS Code's inline completion provider itself once the
        // server advertises inlineCompletionProvider (completions.enabled); this sorts its items.
        provideInlineCompletionItems: (document, position, context, token, next) =>
          this.nextEdits.sort(document, position, context, token, next),
        workspace: {
          // The same object as at start, not VS Code's whole agentls.* section.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers;
            }
            return answers.map((answer, i) =>
              params.items[i]?.section === SECTION ? serverSettings(setting) : answer,
            );
          },
        },
      },
    };
  }

  /** `agentls` from PATH, else the extension's own environment (made on first start);
   * undefined, with the user told, when there is neither. */
  private async defaultCommand(launch: Launch): Promise<string[] | undefined> {
    const onPath = findProgram(SERVER_PROGRAM, launch.env, launch.folders);
    if (onPath) {
      return [onPath];
    }
    const wheel = bundledWheel(this.context.extensionPath);
    if (!wheel) {
      void this.reportMissing(SERVER_PROGRAM);
      return undefined;
    }
    const storage = this.context.globalStorageUri.fsPath;
    const existing = existingEnvironment(storage, wheel);
    if (existing) {
      return existing;
    }
    const pythons = [...(await pythonExtensionInterpreter()), 'python3', 'python'];
    return vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: 'agentls: setting up its Python environment (first start)',
      },
      (progress) =>
        makeEnvironment(storage, wheel, pythons, launch, (text) => {
          this.log.info(text);
          progress.report({ message: text });
        }),
    );
  }

  private async offerSettings(message: string): Promise<void> {
    if (await this.api.showMessage('error', message, ['Open Settings'])) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.server.command');
    }
  }

  private async reportMissing(program: string): Promise<void> {
    const howTo = 'How to install';
    const chosen = await this.api.showMessage(
      'error',
      `The agentls server command "${program}" was not found (a program in a workspace folder, or found ` +
        'through a relative PATH entry, is never started). Install agentls (pip install . in a checkout ' +
        'of agentls) so that it is on PATH, or set agentls.server.command to its absolute path.',
      [howTo, 'Open Settings'],
    );
    if (chosen === howTo) {
      const readme = vscode.Uri.file(path.join(this.context.extensionPath, 'README.md'));
      await vscode.commands.executeCommand('markdown.showPreview', readme);
    } else if (chosen) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.server.command');
    }
  }

  async stop(): Promise<void> {
    // A start under way finishes first: its client is then stopped, not left running.
    await this.starting.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client?.isRunning()) {
      await client.stop();
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  dispose(): void {
    void this.stop();
    this.eyes.dispose();
    this.log.dispose();
  }
}
