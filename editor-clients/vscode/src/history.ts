// What the server keeps of the workspace: checkpoints to undo to, and saved sessions to
// resume (docs/protocol.md: agent.checkpoints, agent.undo, agent.sessions,
// agent.resumeSession). The server decides what is restored and what is a conflict, and
// words each outcome (`outcome`, `description`) as every door shows it; this asks the user
// and passes the answers on.
import type { EditorApi } from './vscodeApi';

/** Sends one workspace/executeCommand to the server and resolves to its answer. */
export type ServerCommand = (command: string, argument?: object) => Promise<unknown>;

/** A quick pick: resolves to the chosen item, undefined if dismissed. */
export type Pick = <T extends PickItem>(items: T[], title: string) => Thenable<T | undefined>;

export interface PickItem {
  label: string;
  description?: string;
  detail?: string;
}

export interface Checkpoint {
  id: number;
  kind: 'task' | 'step' | 'undo';
  task: string;
  step: number | null;
  label: string;
  time: number;
  files: string[];
  /** The checkpoint in the user's words: `fix the bug (step 2: bash: make; 2 files differ)`. */
  description: string;
}

export interface UndoResult {
  checkpoint: number;
  restored: string[];
  removed: string[];
  conflicts: string[];
  declined: string[];
  unrecorded: string[];
  /** What the undo did, in the user's words: `undone: 1 file put back, 1 removed`. */
  outcome: string;
}

export interface SavedSession {
  id: string;
  title: string;
  updated: number;
  tasks: number;
  current: boolean;
  /** The session in the user's words: `“fix the bug” (2 tasks, 5 minutes ago)`. */
  description: string;
}

const OVERWRITE = 'Overwrite Them';
const KEEP = 'Keep Mine';

function when(seconds: number): string {
  return new Date(seconds * 1000).toLocaleString();
}

function listed(paths: string[]): string {
  return paths.length ? paths.join(', ') : 'none';
}

export function checkpointItem(checkpoint: Checkpoint): PickItem & { id: number } {
  return {
    id: checkpoint.id,
    label: checkpoint.description,
    description: when(checkpoint.time),
    detail: checkpoint.files.length ? listed(checkpoint.files) : undefined,
  };
}

export function sessionItem(session: SavedSession): PickItem & { id: string } {
  return {
    id: session.id,
    label: session.description,
    description: session.current ? 'current' : undefined,
  };
}

/**
 * Undo to checkpoint `id` (undefined: before the last task). When files changed since (the
 * server's conflicts), the user chooses whether to overwrite them; `line` gets the outcome
 * for the transcript.
 */
export async function undo(
  api: EditorApi,
  send: ServerCommand,
  line: (text: string) => void,
  id?: number,
): Promise<UndoResult> {
  let result = (await send('agent.undo', id === undefined ? undefined : { id })) as UndoResult;
  line(`Undo to checkpoint ${result.checkpoint}: ${result.outcome}`);
  if (result.conflicts.length) {
    const choice = await api.showMessage(
      'warning',
      `Agent: changed since the checkpoint, so not undone: ${listed(result.conflicts)}`,
      [OVERWRITE, KEEP],
    );
    if (choice === OVERWRITE) {
      result = (await send('agent.undo', { id: result.checkpoint, overwrite: result.conflicts })) as UndoResult;
      line(`Undo to checkpoint ${result.checkpoint}, overwriting: ${result.outcome}`);
    }
  }
  void api.showMessage('info', `Agent: ${result.outcome}`, []);
  return result;
}

/** Pick a checkpoint (newest first) and undo to it; undefined when dismissed. */
export async function undoToCheckpoint(
  api: EditorApi,
  pick: Pick,
  send: ServerCommand,
  line: (text: string) => void,
): Promise<UndoResult | undefined> {
  const checkpoints = (await send('agent.checkpoints')) as Checkpoint[];
  if (!checkpoints.length) {
    void api.showMessage('info', 'Agent: no checkpoints yet.', []);
    return undefined;
  }
  const chosen = await pick(checkpoints.map(checkpointItem), 'Agent: Undo to Checkpoint');
  return chosen ? undo(api, send, line, chosen.id) : undefined;
}

/** Pick a saved session (newest first) and resume it; undefined when dismissed. */
export async function resumeSession(
  api: EditorApi,
  pick: Pick,
  send: ServerCommand,
  line: (text: string) => void,
): Promise<SavedSession | undefined> {
  const sessions = (await send('agent.sessions')) as SavedSession[];
  if (!sessions.length) {
    void api.showMessage('info', 'Agent: no saved sessions for this workspace.', []);
    return undefined;
  }
  const chosen = await pick(sessions.map(sessionItem), 'Agent: Resume Session');
  if (!chosen) {
    return undefined;
  }
  const resumed = (await send('agent.resumeSession', { id: chosen.id })) as SavedSession;
  line(`Resumed ${resumed.description}.`);
  void api.showMessage('info', `Agent: resumed ${resumed.description}; the next task continues it.`, []);
  return resumed;
}
