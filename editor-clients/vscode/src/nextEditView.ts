// Next edits away from the cursor (the server's inline completion items on another line): VS Code
// shows only ghost text that touches the cursor, so the middleware hands the others here. One is
// shown at a time, on its own line: its range highlighted and the line as it would read after it.
// Tab accepts it (the context key below), Escape or any change to the document dismisses it.
import * as vscode from 'vscode';
import { endOfInsert, type NextEdit, nextEditOf, previewLine, type Span, splitItems } from './inlineItems';

/** True while a next edit is shown on a line the user can see: Tab then accepts it. */
export const SHOWN = 'agentls.nextEditShown';

/** The request itself, as the language client's middleware hands it over. */
type Ask = (
  document: vscode.TextDocument,
  position: vscode.Position,
  context: vscode.InlineCompletionContext,
  token: vscode.CancellationToken,
) => vscode.ProviderResult<vscode.InlineCompletionItem[] | vscode.InlineCompletionList>;

const HOW = 'agentls: the next edit. Tab accepts it, Escape dismisses it.';

interface Shown {
  editor: vscode.TextEditor;
  version: number;
  edit: NextEdit;
  command?: vscode.Command;
}

function asRange(span: Span): vscode.Range {
  return new vscode.Range(span.start.line, span.start.character, span.end.line, span.end.character);
}

/** The edit made, the cursor after it (a snippet places it itself). */
async function apply(editor: vscode.TextEditor, edit: NextEdit): Promise<boolean> {
  const range = asRange(edit.range);
  if (edit.snippet) {
    return editor.insertSnippet(new vscode.SnippetString(edit.text), range);
  }
  if (!(await editor.edit((builder) => builder.replace(range, edit.text)))) {
    return false;
  }
  const after = endOfInsert(edit.range.start, edit.text);
  const cursor = new vscode.Position(after.line, after.character);
  editor.selection = new vscode.Selection(cursor, cursor);
  editor.revealRange(new vscode.Range(cursor, cursor));
  return true;
}

export class NextEditView implements vscode.Disposable {
  private shown: Shown | undefined;
  private readonly replaced = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
  });
  private readonly preview = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorGhostText.foreground'), fontStyle: 'italic', margin: '0 0 0 2em' },
  });

  register(): vscode.Disposable {
    return vscode.Disposable.from(
      this,
      vscode.commands.registerCommand('agentls.nextEdit.accept', () => this.accept()),
      vscode.commands.registerCommand('agentls.nextEdit.dismiss', () => this.dismiss()),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document === this.shown?.editor.document && event.contentChanges.length > 0) {
          this.dismiss(); // typing, an undo, another extension's edit: its range is stale
        }
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.dismiss()),
      vscode.window.onDidChangeTextEditorVisibleRanges((event) => {
        if (event.textEditor === this.shown?.editor) {
          void this.updateContext();
        }
      }),
    );
  }

  /** The middleware of textDocument/inlineCompletion: the items at the cursor go to VS Code's
   * ghost text, the first item elsewhere is shown here. A cancelled request changes nothing. */
  async sort(
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
    next: Ask,
  ): Promise<vscode.InlineCompletionList | null> {
    const version = document.version;
    const result = await next(document, position, context, token);
    if (!result || token.isCancellationRequested || document.version !== version) {
      return null; // asked about text the user has changed since
    }
    const items = Array.isArray(result) ? result : result.items;
    const { atCursor, away } = splitItems(items, position);
    const editor = [vscode.window.activeTextEditor, ...vscode.window.visibleTextEditors].find(
      (candidate) => candidate?.document === document,
    );
    const first = away[0];
    if (editor && first?.range) {
      // Not awaited: the ghost text need not wait for the decoration.
      void this.show({
        editor,
        version,
        edit: nextEditOf({ range: first.range, insertText: first.insertText }),
        command: first.command,
      });
    } else {
      this.dismiss();
    }
    return new vscode.InlineCompletionList(atCursor);
  }

  private async show(shown: Shown): Promise<void> {
    this.dismiss();
    const { editor, edit } = shown;
    const range = asRange(edit.range);
    if (!editor.document.validateRange(range).isEqual(range)) {
      return; // past the end of the document: a server's mistake, never shown
    }
    this.shown = shown;
    const line = editor.document.lineAt(range.start.line);
    editor.setDecorations(this.replaced, range.isEmpty ? [] : [{ range, hoverMessage: HOW }]);
    editor.setDecorations(this.preview, [
      {
        range: new vscode.Range(line.range.end, line.range.end),
        hoverMessage: HOW,
        renderOptions: { after: { contentText: `⇥ ${previewLine(line.text, edit)}` } },
      },
    ]);
    await this.updateContext();
  }

  /** Tab is taken only while the edit's line is on screen: never for an edit the user cannot see. */
  private async updateContext(): Promise<void> {
    const shown = this.shown;
    const line = shown?.edit.range.start.line ?? -1;
    const visible = (shown?.editor.visibleRanges ?? []).some((range) => range.start.line <= line && line <= range.end.line);
    await vscode.commands.executeCommand('setContext', SHOWN, visible);
  }

  /** Applies the shown edit to the version it was made for, then puts the cursor after it. */
  async accept(): Promise<boolean> {
    const shown = this.shown;
    this.dismiss();
    if (!shown || shown.editor.document.version !== shown.version) {
      return false;
    }
    if (!(await apply(shown.editor, shown.edit))) {
      return false;
    }
    if (shown.command) {
      // LSP: the item's command runs after its text is inserted.
      await vscode.commands.executeCommand(shown.command.command, ...(shown.command.arguments ?? []));
    }
    return true;
  }

  dismiss(): void {
    if (this.shown) {
      this.clear();
      void vscode.commands.executeCommand('setContext', SHOWN, false);
    }
  }

  private clear(): void {
    this.shown?.editor.setDecorations(this.replaced, []);
    this.shown?.editor.setDecorations(this.preview, []);
    this.shown = undefined;
  }

  dispose(): void {
    this.dismiss();
    this.replaced.dispose();
    this.preview.dispose();
  }
}
