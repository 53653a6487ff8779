// Command approvals: the server's agent/approveCommand (docs/protocol.md), put to the user.
// The words (prompt, choices) are the server's; the extension only shows them.
import type { EditorApi } from './vscodeApi';

export const APPROVE_COMMAND = 'agent/approveCommand';

/** What the extension tells the server it answers, in `capabilities.experimental`. */
export const EXPERIMENTAL_CAPABILITIES = { agentls: { approveCommand: true } };

export interface Choice {
  id: string;
  title: string;
}

export interface ApproveCommandParams {
  command: string;
  cwd: string;
  /** False for a command that would run outside the sandbox; the prompt says so too. */
  sandboxed: boolean;
  prompt: string;
  choices: Choice[];
}

/**
 * A modal dialog, so it cannot be missed and shows the whole command; closing it answers
 * null, which the server takes as a denial. Every answer goes into the transcript.
 */
export async function answerApproveCommand(
  api: EditorApi,
  transcript: { line(text: string): void },
  params: ApproveCommandParams,
): Promise<{ choice: string } | null> {
  const titles = params.choices.map((choice) => choice.title);
  const chosen = await api.askModal(params.prompt, params.command, titles);
  const choice = params.choices.find((candidate) => candidate.title === chosen);
  transcript.line(`  ? ${params.command}  →  ${choice ? choice.title : 'dismissed (denied)'}`);
  return choice ? { choice: choice.id } : null;
}
