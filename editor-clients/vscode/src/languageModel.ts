// agentls's model as a VS Code language model: the Chat view needs one to send any request,
// @agentls's included, and without it falls back to a model that needs a sign-in. The model
// is the one agentls is configured with (agent.model); its answers come from agent.chat, so
// the provider, endpoint and key rules are the server's.
import { randomUUID } from 'crypto';
import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import type { AgentServer } from './server';

export const VENDOR = 'agentls';

/** agent.model's answer (docs/protocol.md). */
interface ModelDescription {
  id?: string;
  providerTitle?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  error?: string;
}

/** What agent.chat (text only) is told where a message held an image. */
const IMAGE_NOT_SENT = '[an image was attached here; this chat sends text only: @agentls tasks take images]';

/** An image part (a LanguageModelDataPart: not in the stable API's types), by its shape. */
function isImagePart(part: unknown): boolean {
  const mimeType = (part as { mimeType?: unknown } | null)?.mimeType;
  return typeof mimeType === 'string' && mimeType.startsWith('image/');
}

/** A chat message as agent.chat takes it: its text parts, tool results as their text, and
 * a note for an image, which agent.chat cannot carry. */
export function chatMessage(message: vscode.LanguageModelChatRequestMessage): { role: string; text: string } {
  const text = message.content
    .map((part) => {
      if (part instanceof vscode.LanguageModelTextPart) {
        return part.value;
      }
      if (isImagePart(part)) {
        return IMAGE_NOT_SENT;
      }
      if (part instanceof vscode.LanguageModelToolResultPart) {
        return part.content
          .map((piece) => (piece instanceof vscode.LanguageModelTextPart ? piece.value : ''))
          .join('');
      }
      return '';
    })
    .join('');
  return { role: message.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant' : 'user', text };
}

/** How long the model list waits for a starting server to say which model it has. */
const DESCRIBE_WAIT_MS = 5000;

export class AgentModelProvider implements vscode.LanguageModelChatProvider {
  constructor(
    private readonly agent: AgentServer,
    private readonly version: string,
  ) {}

  /** What the server says its model is; nothing when it is not up within a few seconds
   * (the first start may be making its environment). */
  private async describe(): Promise<ModelDescription> {
    const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), DESCRIBE_WAIT_MS));
    try {
      const client = await Promise.race([this.agent.ready(), timeout]);
      if (!client) {
        return {};
      }
      const answer = await client.sendRequest(ExecuteCommandRequest.type, { command: 'agent.model', arguments: [] });
      return (answer as ModelDescription | null) ?? {};
    } catch {
      return {};
    }
  }

  // No onDidChangeLanguageModelChatInformation: the Chat view drops its selection of a model
  // whose information changes, and then refuses requests ("Language model unavailable").
  async provideLanguageModelChatInformation(): Promise<vscode.LanguageModelChatInformation[]> {
    const { id, providerTitle, contextWindow, maxOutputTokens, error } = await this.describe();
    return [
      {
        // One stable id and name, so the Chat view keeps it selected whatever is configured.
        id: 'agentls',
        name: 'agentls',
        family: id ?? 'agentls',
        version: this.version,
        detail: id,
        tooltip: error ?? (id ? `${id} on ${providerTitle}, as agentls is configured` : 'The model agentls is configured with'),
        maxInputTokens: contextWindow ?? 200_000,
        maxOutputTokens: maxOutputTokens ?? 16_000,
        // The Chat view's default Agent mode lists only models that call tools. Tools
        // offered here are not passed on: agent.chat answers in text. Images: without
        // imageInput the Chat view marks an attached or pasted image "agentls does not support
        // images", yet @agentls passes it to its task (agent.runTask's `images`).
        capabilities: { toolCalling: true, imageInput: true },
      },
    ];
  }

  async provideLanguageModelChatResponse(
    _model: vscode.LanguageModelChatInformation,
    messages: readonly vscode.LanguageModelChatRequestMessage[],
    _options: vscode.ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<vscode.LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const client = await this.agent.ready();
    const stream = `agentls-chat-${randomUUID()}`;
    const listening = this.agent.events.listen(stream, {
      quiet: true,
      text: (text) => progress.report(new vscode.LanguageModelTextPart(text)),
    });
    try {
      await client.sendRequest(
        ExecuteCommandRequest.type,
        { command: 'agent.chat', arguments: [{ messages: messages.map(chatMessage) }], workDoneToken: stream },
        token,
      );
    } finally {
      listening.dispose();
    }
  }

  /** An estimate (about four characters a token): the server does not count tokens. */
  async provideTokenCount(
    _model: vscode.LanguageModelChatInformation,
    text: string | vscode.LanguageModelChatRequestMessage,
  ): Promise<number> {
    const value = typeof text === 'string' ? text : chatMessage(text).text;
    return Math.ceil(value.length / 4);
  }
}
