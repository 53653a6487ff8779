// The "Agent Plan" view in the Explorer: the running task's plan, one item a row.
import * as vscode from 'vscode';
import type { Plan, PlanItem } from './plan';

const ICONS: Record<string, string> = {
  completed: 'pass-filled',
  in_progress: 'arrow-right',
  pending: 'circle-large-outline',
};

export class PlanView implements vscode.TreeDataProvider<PlanItem>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly plan: Plan) {
    plan.onChange(() => this.changed.fire());
  }

  getTreeItem(item: PlanItem): vscode.TreeItem {
    const row = new vscode.TreeItem(item.content);
    row.iconPath = new vscode.ThemeIcon(ICONS[item.status] ?? ICONS.pending);
    row.tooltip = `${item.status.replace('_', ' ')}: ${item.content}`;
    return row;
  }

  getChildren(item?: PlanItem): PlanItem[] {
    return item ? [] : [...this.plan.items];
  }

  dispose(): void {
    this.changed.dispose();
  }
}
