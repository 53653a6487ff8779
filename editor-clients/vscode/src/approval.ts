// Command approvals: the server's window/showMessageRequest, put to the user.
import type { EditorApi } from './vscodeApi';

// A type alias, not an interface: LSP's item has an index signature it must be assignable to.
export type MessageActionItem = { title: string };

export interface ShowMessageRequestParams {
  type: number;
  message: string;
  actions?: MessageActionItem[];
}

/** docs/protocol.md: a bash command to approve arrives with this first line. */
const COMMAND_PROMPT = 'The agent wants to run:\n';

const KINDS: Record<number, 'error' | 'warning' | 'info'> = { 1: 'error', 2: 'warning' };

/**
 * Answers a showMessageRequest. A command approval is a modal dialog, so it cannot be
 * missed and shows the whole command; closing it answers null, which the server takes as
 * Deny. Every answer goes into the transcript.
 */
export async function answerMessageRequest(
  api: EditorApi,
  transcript: { line(text: string): void },
  params: ShowMessageRequestParams,
): Promise<MessageActionItem | null> {
  const actions = params.actions ?? [];
  const titles = actions.map((action) => action.title);
  if (!params.message.startsWith(COMMAND_PROMPT)) {
    const chosen = await api.showMessage(KINDS[params.type] ?? 'info', params.message, titles);
    return actions.find((action) => action.title === chosen) ?? null;
  }
  const command = params.message.slice(COMMAND_PROMPT.length);
  const chosen = await api.askModal('The agent wants to run a command', command, titles);
  const answer = actions.find((action) => action.title === chosen) ?? null;
  transcript.line(`  ? ${command}  →  ${answer ? answer.title : 'dismissed (denied)'}`);
  return answer;
}
