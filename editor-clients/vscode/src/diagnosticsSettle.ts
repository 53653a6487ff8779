// When a document's diagnostics have caught up with its text. VS Code's diagnostics carry no
// document version, and a language server can report an analysis of the text before a change
// just after that change: TypeScript re-checks every open file when the review's diff
// closes, and that check of the old text lands right after the accepted edit. So a report
// counts as caught up only when it differs from the one the change made stale.
// No `vscode` import: the unit tests run this in plain Node.

export class DiagnosticsSettle {
  /** Documents changed since their last report, each with that report (as a key). */
  private readonly behind = new Map<string, string>();
  private readonly waiters = new Set<() => void>();

  /** `uri`'s text changed; `reported` is what its diagnostics said then. */
  changed(uri: string, reported: string): void {
    this.behind.set(uri, reported);
  }

  /** `uri`'s diagnostics are now `reported`. The same as when its text last changed: the
   * old text's analysis again, or an edit that changed none of them (which can't be told
   * apart), so it is still waited for. */
  reported(uri: string, reported: string): void {
    if (this.behind.get(uri) !== reported) {
      this.behind.delete(uri);
    }
    for (const wake of [...this.waiters]) {
      wake();
    }
  }

  caughtUp(uri: string): boolean {
    return !this.behind.has(uri);
  }

  /** Resolves once every one of `uris` has caught up, or after `ms`. */
  settled(uris: string[], ms: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (uris.every((uri) => this.caughtUp(uri))) {
          finish();
        }
      };
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.waiters.add(check);
      check();
    });
  }
}
