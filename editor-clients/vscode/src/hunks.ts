// The extension's own logic for reviewing an edit: the server's TextEdits as hunks (one
// TextEdit per hunk, labelled by its change annotation: docs/protocol.md), applying a
// chosen subset, and keeping the user's decision for each hunk.
// No `vscode` import: the unit tests run this in plain Node.

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface TextEdit {
  range: Range;
  newText: string;
  annotationId?: string;
}

/** One TextEdit of the server: [start, end) as string offsets of the original, replaced by
 * newText, and what the editor shows of it (the server's words). */
export interface Hunk {
  start: number;
  end: number;
  newText: string;
  label: string;
}

/** An edit the review cannot show as the protocol defines it. */
export class UnsupportedEdit extends Error {}

/** String offset of an LSP position (UTF-16 code units, as VS Code negotiates), clamped. */
export function offsetAt(text: string, position: Position): number {
  let offset = 0;
  for (let line = 0; line < position.line; line++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) {
      return text.length;
    }
    offset = next + 1;
  }
  const lineEnd = text.indexOf('\n', offset);
  const end = lineEnd < 0 ? text.length : lineEnd;
  return Math.min(offset + Math.max(position.character, 0), end);
}

export function positionAt(text: string, offset: number): Position {
  const before = text.slice(0, offset);
  const line = before.split('\n').length - 1;
  return { line, character: offset - (before.lastIndexOf('\n') + 1) };
}

/**
 * The server's edits as hunks, in document order, each with its change annotation's label
 * ("hunk 1 of 2: change of lines 3-4", the words the model is told). Edits that overlap
 * are not what the server sends, and are refused rather than applied wrongly.
 */
export function hunksOf(
  text: string,
  edits: readonly TextEdit[],
  annotations: Record<string, { label: string }> | undefined,
): Hunk[] {
  const hunks = edits
    .map((edit) => ({
      start: offsetAt(text, edit.range.start),
      end: offsetAt(text, edit.range.end),
      newText: edit.newText,
      label: (edit.annotationId && annotations?.[edit.annotationId]?.label) || '',
    }))
    .sort((a, b) => a.start - b.start || a.end - b.end);
  hunks.forEach((hunk, i) => {
    if (i > 0 && hunk.start < hunks[i - 1].end) {
      throw new UnsupportedEdit('edits that overlap cannot be reviewed');
    }
    hunk.label ||= `hunk ${i + 1} of ${hunks.length}`;
  });
  return hunks;
}

/** The text with the given hunks applied (hunks in document order, as hunksOf gives). */
export function applyHunks(text: string, hunks: readonly Hunk[]): string {
  let result = '';
  let cursor = 0;
  for (const hunk of hunks) {
    result += text.slice(cursor, hunk.start) + hunk.newText;
    cursor = hunk.end;
  }
  return result + text.slice(cursor);
}

export type Decision = 'pending' | 'accepted' | 'rejected';

/** The user's decision for each hunk of one file under review. */
export class HunkDecisions {
  private readonly decisions: Decision[];

  constructor(count: number) {
    this.decisions = new Array<Decision>(count).fill('pending');
  }

  get all(): readonly Decision[] {
    return this.decisions;
  }

  decide(index: number, decision: Decision): void {
    if (index < 0 || index >= this.decisions.length) {
      throw new RangeError(`no hunk ${index + 1} in this review`);
    }
    this.decisions[index] = decision;
  }

  decideAll(decision: Decision): void {
    this.decisions.fill(decision);
  }

  /** What closing a review does: whatever is still undecided is rejected. */
  rejectPending(): void {
    this.decisions.forEach((decision, i) => {
      if (decision === 'pending') {
        this.decisions[i] = 'rejected';
      }
    });
  }

  get finished(): boolean {
    return !this.decisions.includes('pending');
  }

  /** The hunks to show on the proposal side: everything not rejected. */
  shown<T>(hunks: readonly T[]): T[] {
    return hunks.filter((_, i) => this.decisions[i] !== 'rejected');
  }

  accepted<T>(hunks: readonly T[]): T[] {
    return hunks.filter((_, i) => this.decisions[i] === 'accepted');
  }
}
