// The background tasks (`agent.backgroundTasks`, `agent/backgroundTask`): the latest item of
// each, and how a row shows one. No vscode here: the Agent Tasks view (tasksView.ts) draws it.

/** One task as the server lists it (docs/protocol.md, "Background tasks"). */
export interface BackgroundTask {
  id: string;
  task: string;
  title: string;
  status: string;
  steps: number;
  tokens: number;
  cost: number | null;
  created: number;
  started: number | null;
  ended: number | null;
  branch: string;
  worktree: string;
  error: string | null;
  reviewed: boolean;
  files: string[];
  log: string;
}

/** A task still to end: it runs, or waits for a place. */
export function active(task: BackgroundTask): boolean {
  return task.status === 'queued' || task.status === 'running';
}

const ICONS: Record<string, string> = {
  queued: 'clock',
  running: 'loading~spin',
  done: 'pass',
  failed: 'warning',
  error: 'error',
  timeout: 'watch',
  cancelled: 'circle-slash',
};

/** What a row shows: the task, then its state, steps and cost; its icon; its actions. */
export function row(task: BackgroundTask): { label: string; description: string; icon: string; context: string } {
  const parts = [task.reviewed ? 'reviewed' : task.status];
  if (task.steps) {
    parts.push(`${task.steps} step${task.steps === 1 ? '' : 's'}`);
  }
  if (task.cost !== null) {
    parts.push(`$${task.cost.toFixed(4)}`);
  }
  if (task.status === 'done' && !task.reviewed) {
    parts.push(task.files.length === 1 ? '1 file' : `${task.files.length} files`);
  }
  const icon = task.reviewed ? 'check-all' : ICONS[task.status] ?? 'circle-outline';
  // The view's menus choose the actions by this: Cancel while it runs, Review once it ended
  // with a change not reviewed yet, Discard and Open Log always.
  const reviewable = !active(task) && !task.reviewed && task.files.length > 0;
  const context = active(task) ? 'agentlsTask.active' : reviewable ? 'agentlsTask.reviewable' : 'agentlsTask.ended';
  return { label: task.title || task.task, description: parts.join(' · '), icon, context };
}

/** The tasks by id, newest information first; listeners told of each change. */
export class BackgroundTasks {
  private readonly byId = new Map<string, BackgroundTask>();
  private readonly listeners: (() => void)[] = [];

  get items(): BackgroundTask[] {
    return [...this.byId.values()].sort((a, b) => b.created - a.created);
  }

  /** The whole list, as `agent.backgroundTasks` answered it. */
  replace(tasks: BackgroundTask[]): void {
    this.byId.clear();
    for (const task of tasks) {
      this.byId.set(task.id, task);
    }
    this.changed();
  }

  /** One task, as `agent/backgroundTask` told of it. */
  update(task: BackgroundTask): void {
    this.byId.set(task.id, task);
    this.changed();
  }

  remove(id: string): void {
    this.byId.delete(id);
    this.changed();
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) {
      listener();
    }
  }
}

/** The words of a review's answer, for a message: what landed, what conflicted. */
export function reviewOutcome(result: {
  files: { path: string; hunks: number; accepted: number }[];
  conflicts: string[];
  binary: string[];
}): string {
  const accepted = result.files.reduce((sum, file) => sum + file.accepted, 0);
  const total = result.files.reduce((sum, file) => sum + file.hunks, 0);
  const parts = [`${accepted} of ${total} change${total === 1 ? '' : 's'} applied`];
  if (result.conflicts.length) {
    parts.push(`not applied (you changed those lines): ${result.conflicts.join('; ')}`);
  }
  if (result.binary.length) {
    parts.push(`binary files left on the branch: ${result.binary.join(', ')}`);
  }
  return parts.join('. ');
}
