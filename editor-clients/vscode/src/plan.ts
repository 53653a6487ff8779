// The model's plan for the running task (`agent/plan`): the latest list, and who shows it.
// No `vscode` import, so the unit tests can run it.

export type PlanStatus = 'pending' | 'in_progress' | 'completed';

export interface PlanItem {
  content: string;
  status: PlanStatus;
}

export interface PlanParams {
  token?: unknown;
  items: PlanItem[];
}

const MARKS: Record<string, string> = { completed: '☑', in_progress: '▶', pending: '☐' };

/** One line per item, its state as a mark (an unknown state shows as pending). */
export function checklist(items: readonly PlanItem[]): string[] {
  return items.map((item) => `${MARKS[item.status] ?? MARKS.pending} ${item.content}`);
}

export class Plan {
  private current: PlanItem[] = [];
  private readonly listeners: Array<() => void> = [];

  get items(): readonly PlanItem[] {
    return this.current;
  }

  /** The whole new list, as the server sends it each time. */
  update(items: PlanItem[]): void {
    this.current = items;
    for (const listener of this.listeners) {
      listener();
    }
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }
}
