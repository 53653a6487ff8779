// The server's inline completion items (textDocument/inlineCompletion, docs/protocol.md), sorted
// into ghost text at the cursor, which VS Code shows itself, and next edits elsewhere, which
// it would drop (its ghost text must touch the cursor) and nextEditView.ts shows instead.
// No `vscode` import: VS Code's Range and Position fit these shapes, so the tests need no editor.

export interface Pos {
  line: number;
  character: number;
}

export interface Span {
  start: Pos;
  end: Pos;
}

/** An inline completion item, as far as the sorting reads it: insertText is a string or a
 * snippet (VS Code's SnippetString, LSP's StringValue), both with the text in `value`. */
export interface ItemShape {
  range?: Span;
  insertText: string | { value: string };
}

/** The longest preview shown after a line: a model's text is not bounded by us. */
export const PREVIEW_CHARS = 120;

function before(a: Pos, b: Pos): boolean {
  return a.line < b.line || (a.line === b.line && a.character < b.character);
}

/** Whether VS Code can show the item as ghost text: no range (an insertion at the cursor), or a
 * range on the cursor's line that holds the cursor. */
export function isAtCursor(range: Span | undefined, cursor: Pos): boolean {
  if (!range) {
    return true;
  }
  return range.start.line === cursor.line && !before(cursor, range.start) && !before(range.end, cursor);
}

export function splitItems<T extends ItemShape>(items: readonly T[], cursor: Pos): { atCursor: T[]; away: T[] } {
  const atCursor: T[] = [];
  const away: T[] = [];
  for (const item of items) {
    (isAtCursor(item.range, cursor) ? atCursor : away).push(item);
  }
  return { atCursor, away };
}

/** The replacement a next edit makes: its range, its text, and whether that text is a snippet. */
export interface NextEdit {
  range: Span;
  text: string;
  snippet: boolean;
}

/** Every item away from the cursor has a range (isAtCursor takes the others). */
export function nextEditOf(item: ItemShape & { range: Span }): NextEdit {
  const { insertText } = item;
  return typeof insertText === 'string'
    ? { range: item.range, text: insertText, snippet: false }
    : { range: item.range, text: insertText.value, snippet: true };
}

/** Where the inserted text ends, for the cursor once the edit is accepted. */
export function endOfInsert(start: Pos, text: string): Pos {
  const lines = text.split('\n');
  const last = lines[lines.length - 1];
  return lines.length === 1
    ? { line: start.line, character: start.character + last.length }
    : { line: start.line + lines.length - 1, character: last.length };
}

/** The edit's first line as the line will read once it is accepted, shown after that line:
 * "…" marks more lines to come, and a preview past PREVIEW_CHARS is cut. */
export function previewLine(lineText: string, edit: NextEdit): string {
  const { start, end } = edit.range;
  const rest = end.line === start.line ? lineText.slice(end.character) : '';
  const after = `${lineText.slice(0, start.character)}${edit.text}${rest}`;
  const newline = after.indexOf('\n');
  const first = (newline === -1 ? after : after.slice(0, newline)).trim();
  const more = newline !== -1 || end.line !== start.line;
  const cut = first.length > PREVIEW_CHARS ? `${first.slice(0, PREVIEW_CHARS)}…` : first;
  return more && !cut.endsWith('…') ? `${cut} …` : cut;
}
