// The extension's own logic for reviewing an edit: splitting the server's TextEdits into
// line hunks, applying a chosen subset, and keeping the user's decision for each hunk.
// No `vscode` import: the unit tests run this in plain Node.
import { diffArrays } from 'diff';

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
}

/** Whole lines of the original, [start, end) as string offsets, replaced by newText. */
export interface Hunk {
  start: number;
  end: number;
  newText: string;
}

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

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function lineEndAfter(text: string, offset: number): number {
  if (offset === lineStart(text, offset)) {
    return offset;
  }
  const next = text.indexOf('\n', offset);
  return next < 0 ? text.length : next + 1;
}

function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

interface Region {
  start: number;
  end: number;
  edits: { start: number; end: number; newText: string }[];
}

/** The edits widened to whole lines; edits that touch the same lines share one region. */
function regions(text: string, edits: TextEdit[]): Region[] {
  const spans = edits
    .map((edit) => ({
      start: offsetAt(text, edit.range.start),
      end: offsetAt(text, edit.range.end),
      newText: edit.newText,
    }))
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: Region[] = [];
  for (const span of spans) {
    const start = lineStart(text, span.start);
    const end = Math.max(lineEndAfter(text, span.end), start);
    const last = merged[merged.length - 1];
    if (last && start < last.end) {
      last.end = Math.max(last.end, end);
      last.edits.push(span);
    } else {
      merged.push({ start, end, edits: [span] });
    }
  }
  return merged;
}

/**
 * Line hunks of a set of TextEdits: each run of changed lines becomes its own hunk, so
 * a whole-document replacement is reviewed as finely as the server's one-edit-per-hunk.
 */
export function splitIntoHunks(text: string, edits: TextEdit[]): Hunk[] {
  const hunks: Hunk[] = [];
  for (const region of regions(text, edits)) {
    let proposed = '';
    let cursor = region.start;
    for (const edit of region.edits) {
      proposed += text.slice(cursor, Math.max(edit.start, cursor)) + edit.newText;
      cursor = Math.max(cursor, edit.end);
    }
    proposed += text.slice(cursor, region.end);
    let offset = region.start;
    let pending: Hunk | undefined;
    for (const part of diffArrays(splitLines(text.slice(region.start, region.end)), splitLines(proposed))) {
      const size = part.value.join('').length;
      if (!part.added && !part.removed) {
        pending = undefined;
        offset += size;
        continue;
      }
      if (!pending) {
        pending = { start: offset, end: offset, newText: '' };
        hunks.push(pending);
      }
      if (part.removed) {
        pending.end += size;
        offset += size;
      } else {
        pending.newText += part.value.join('');
      }
    }
  }
  return hunks;
}

/** The text with the given hunks applied (hunks in document order, as splitIntoHunks gives). */
export function applyHunks(text: string, hunks: readonly Hunk[]): string {
  let result = '';
  let cursor = 0;
  for (const hunk of hunks) {
    result += text.slice(cursor, hunk.start) + hunk.newText;
    cursor = hunk.end;
  }
  return result + text.slice(cursor);
}

/** "lines 3-4" of the original (1-based), "after line 7" for a pure insertion. */
export function describeHunk(text: string, hunk: Hunk): string {
  const first = positionAt(text, hunk.start).line + 1;
  if (hunk.end === hunk.start) {
    return first === 1 ? 'at the top' : `after line ${first - 1}`;
  }
  const last = positionAt(text, hunk.end - 1).line + 1;
  return first === last ? `line ${first}` : `lines ${first}-${last}`;
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
