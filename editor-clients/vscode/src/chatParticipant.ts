// @agentls in VS Code's Chat view: a request runs a task on the active file and selection
// (as Agent: Run Task does) and its reply streams what happens, with stable chat parts only.
// A new chat is a new agentls session; a chat's follow-ups continue the session its last
// reply names. `/ask` is a plain question to the chat's model (agentls's own, by default).
import * as vscode from 'vscode';
import { type Checkpoint, type SavedSession, type ServerCommand } from './history';
import { referencedImages } from './images';
import { checklist, type PlanItem } from './plan';
import { taskArguments, type TaskProgress } from './progress';
import type { BackgroundTasks } from './backgroundTasks';
import { runInBackground } from './tasksView';
import type { Reviewer } from './review';
import { markdownText, SubagentParts, type SubagentParams } from './subagentParts';
import type { TaskListener } from './taskEvents';
import type { StepParams, TaskResult } from './transcript';

export const PARTICIPANT = 'agentls.agent';

/** The tools whose summary is a workspace path, shown as a link to the file. */
const FILE_TOOLS = new Set(['read_file', 'edit_file', 'write_file']);

interface ChatMetadata {
  session?: string;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A fenced block that the text cannot close early. */
function fenced(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `\n${fence}text\n${text}\n${fence}\n\n`;
}

/** The file a step names, when it lies in the workspace. */
function workspaceFile(relative: string): vscode.Uri | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  if (!folder || !relative || relative.startsWith('/') || relative.split(/[\\/]/).includes('..')) {
    return undefined;
  }
  return vscode.Uri.joinPath(folder, relative);
}

/** A task's events as parts of one chat reply. */
class ReplyStream implements TaskListener {
  private midLine = false;
  private readonly subagents: SubagentParts;

  constructor(private readonly stream: vscode.ChatResponseStream) {
    this.subagents = new SubagentParts({
      progress: (message) => stream.progress(message),
      markdown: (text) => {
        this.newParagraph();
        stream.markdown(text);
      },
    });
  }

  text(piece: string): void {
    this.stream.markdown(piece);
    this.midLine = !piece.endsWith('\n');
  }

  step(step: StepParams): void {
    const what = step.summary ? `${step.tool}: ${step.summary}` : step.tool;
    if (step.subagent) {
      this.subagents.step(step);
      return;
    }
    if (step.state === 'started') {
      this.stream.progress(what);
      return;
    }
    if (step.tool === 'agent' && this.subagents.repeats(step.detail)) {
      return; // the subagent's block just said it all
    }
    this.newParagraph();
    const file = FILE_TOOLS.has(step.tool) ? workspaceFile(step.summary) : undefined;
    const mark = step.state === 'succeeded' ? '✓' : '✗';
    if (file) {
      this.stream.markdown(`${mark} ${step.tool}: `);
      this.stream.anchor(file, step.summary);
      this.stream.reference(file);
    } else {
      this.stream.markdown(`${mark} ${markdownText(what)}`);
    }
    this.stream.markdown(step.detail ? ` — ${markdownText(step.detail)}\n\n` : '\n\n');
    if (step.outputTail) {
      this.stream.markdown(fenced(step.outputTail));
    }
  }

  subagent(params: SubagentParams): void {
    if (params.state === 'started') {
      this.subagents.started(params);
    } else {
      this.subagents.ended(params);
    }
  }

  plan(items: PlanItem[]): void {
    this.newParagraph();
    this.stream.markdown(`**Plan**\n\n${checklist(items).map((line) => `- ${markdownText(line)}`).join('\n')}\n\n`);
  }

  ended(result: TaskResult): void {
    this.subagents.endAll();
    this.newParagraph();
    this.stream.markdown(`**■ ${markdownText(result.outcome)}**\n\n`);
    if (result.summary && result.status !== 'done') {
      this.stream.markdown(`${markdownText(result.summary)}\n\n`);
    }
  }

  private newParagraph(): void {
    if (this.midLine) {
      this.stream.markdown('\n\n');
      this.midLine = false;
    }
  }
}

/** One of `agent.commands`' answer: a skill or command the task text may start with. */
interface SlashCommand {
  name: string;
  description: string;
  hint: string;
}

export class ChatParticipant {
  constructor(
    private readonly progress: TaskProgress,
    private readonly reviewer: Reviewer,
    private readonly send: ServerCommand,
    private readonly tasks: BackgroundTasks,
  ) {}

  register(extensionUri: vscode.Uri): vscode.Disposable {
    // `@agentls /name args` for a skill or command the server knows: VS Code's chat API
    // takes a participant's commands from package.json only, so any other `/name` stays in
    // the prompt, which the server expands (`agent.commands` lists them).
    const participant = vscode.chat.createChatParticipant(PARTICIPANT, (request, context, stream, token) =>
      request.command === 'ask'
        ? this.ask(request, context, stream, token)
        : request.command === 'commands'
          ? this.listCommands(stream)
          : request.command === 'background'
            ? this.background(request, stream)
            : this.runTask(request, context, stream, token),
    );
    participant.iconPath = vscode.Uri.joinPath(extensionUri, 'icon.png');
    return participant;
  }

  private async listCommands(stream: vscode.ChatResponseStream): Promise<vscode.ChatResult> {
    const commands = (await this.send('agent.commands')) as SlashCommand[];
    if (commands.length === 0) {
      stream.markdown('No skills or commands here: see `agentls skills`.');
      return {};
    }
    const lines = commands.map(
      (c) => `- \`/${c.name}${c.hint ? ' ' + c.hint : ''}\`: ${markdownText(c.description)}`,
    );
    stream.markdown(`Run one with \`@agentls /name arguments\`:\n\n${lines.join('\n')}`);
    return {};
  }

  /** `/background <task>`: the task started in a worktree of its own; the chat goes on. */
  private async background(request: vscode.ChatRequest, stream: vscode.ChatResponseStream): Promise<vscode.ChatResult> {
    const task = request.prompt.trim();
    if (!task) {
      stream.markdown('Say what the agent should do in the background, e.g. `@agentls /background add a --json flag`.');
      return {};
    }
    const started = await runInBackground(this.send, this.tasks, task);
    if (started) {
      stream.markdown(`Running in the background on \`${markdownText(started.branch)}\`; the Agent Tasks view shows it.`);
      stream.button({ command: 'agentls.tasks.review', title: 'Review when done' });
    }
    return {};
  }

  private async runTask(
    request: vscode.ChatRequest,
    context: vscode.ChatContext,
    stream: vscode.ChatResponseStream,
    token: vscode.CancellationToken,
  ): Promise<vscode.ChatResult> {
    if (this.progress.running) {
      stream.markdown('An agent task is already running; wait for it, or cancel it.');
      stream.button({ command: 'agentls.cancel', title: 'Cancel' });
      return {};
    }
    const task = request.prompt.trim();
    if (!task) {
      stream.markdown('Say what the agent should do, e.g. `@agentls add type hints to this function`.');
      return {};
    }
    stream.progress('Starting agentls…');
    const reply = new ReplyStream(stream);
    const reviews = this.reviewer.onDidStartReview((review) => {
      stream.button({
        command: 'agentls.review.show',
        arguments: [review.key],
        title: `Review ${vscode.workspace.asRelativePath(review.uri)}`,
      });
    });
    try {
      await this.enterSession(context);
      stream.button({ command: 'agentls.cancel', title: 'Cancel' });
      // Images attached or pasted in the Chat view go along (agent.runTask's `images`).
      const images = await referencedImages(request.references);
      const result = await this.progress.run(taskArguments(task, images), { listener: reply, cancel: token });
      if (!result) {
        return {};
      }
      reply.ended(result);
      if (result.edits && (result.edits.applied ?? 0) > 0) {
        await this.offerUndo(stream);
      }
      const metadata: ChatMetadata = { session: result.session };
      return { metadata };
    } catch (error) {
      stream.markdown(`The task did not run: ${markdownText(message(error))}`);
      return { errorDetails: { message: message(error) } };
    } finally {
      reviews.dispose();
    }
  }

  /** A new chat starts a new session; a follow-up goes on with its chat's. */
  private async enterSession(context: vscode.ChatContext): Promise<void> {
    const replies = context.history.filter(
      (turn): turn is vscode.ChatResponseTurn =>
        turn instanceof vscode.ChatResponseTurn && turn.participant === PARTICIPANT,
    );
    if (!replies.length) {
      await this.send('agent.newSession');
      return;
    }
    const wanted = replies
      .map((turn) => (turn.result.metadata as ChatMetadata | undefined)?.session)
      .filter((id): id is string => !!id)
      .pop();
    if (!wanted) {
      return; // its earlier tasks could not be saved: the session the server holds is its
    }
    const sessions = (await this.send('agent.sessions')) as SavedSession[];
    if (!sessions.some((session) => session.current && session.id === wanted)) {
      await this.send('agent.resumeSession', { id: wanted });
    }
  }

  /** Undo this task: back to the checkpoint taken before it (the newest task checkpoint). */
  private async offerUndo(stream: vscode.ChatResponseStream): Promise<void> {
    const checkpoints = (await this.send('agent.checkpoints')) as Checkpoint[];
    const before = checkpoints.find((checkpoint) => checkpoint.kind === 'task');
    if (before) {
      stream.button({ command: 'agentls.undoTask', arguments: [before.id], title: 'Undo this task' });
    }
  }

  /** `/ask`: the question and the chat so far, to the chat's model; no task, no tools. */
  private async ask(
    request: vscode.ChatRequest,
    context: vscode.ChatContext,
    stream: vscode.ChatResponseStream,
    token: vscode.CancellationToken,
  ): Promise<vscode.ChatResult> {
    const messages: vscode.LanguageModelChatMessage[] = [];
    for (const turn of context.history) {
      if (turn instanceof vscode.ChatRequestTurn) {
        messages.push(vscode.LanguageModelChatMessage.User(turn.prompt));
      } else if (turn instanceof vscode.ChatResponseTurn) {
        const said = turn.response
          .filter((part): part is vscode.ChatResponseMarkdownPart => part instanceof vscode.ChatResponseMarkdownPart)
          .map((part) => part.value.value)
          .join('');
        messages.push(vscode.LanguageModelChatMessage.Assistant(said));
      }
    }
    messages.push(vscode.LanguageModelChatMessage.User(request.prompt));
    try {
      const response = await request.model.sendRequest(messages, {}, token);
      for await (const piece of response.text) {
        stream.markdown(piece);
      }
      return {};
    } catch (error) {
      stream.markdown(`No answer: ${markdownText(message(error))}`);
      return { errorDetails: { message: message(error) } };
    }
  }
}
