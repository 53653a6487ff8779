import * as assert from 'assert';
import { applyHunks, describeHunk, HunkDecisions, offsetAt, splitIntoHunks, type TextEdit } from '../../src/hunks';

const edit = (sl: number, sc: number, el: number, ec: number, newText: string): TextEdit => ({
  range: { start: { line: sl, character: sc }, end: { line: el, character: ec } },
  newText,
});

const text = 'a\nb\nc\nd\ne\nf\n';

describe('splitIntoHunks', () => {
  it('keeps the server’s one edit per hunk as they are', () => {
    const hunks = splitIntoHunks(text, [edit(1, 0, 2, 0, 'B\n'), edit(4, 0, 5, 0, 'E\n')]);
    assert.deepStrictEqual(hunks, [
      { start: 2, end: 4, newText: 'B\n' },
      { start: 8, end: 10, newText: 'E\n' },
    ]);
    assert.strictEqual(applyHunks(text, hunks), 'a\nB\nc\nd\nE\nf\n');
  });

  it('splits a whole-document replacement into its changed runs of lines', () => {
    const hunks = splitIntoHunks(text, [edit(0, 0, 6, 0, 'a\nB\nc\nd\nE\nE2\nf\n')]);
    assert.strictEqual(hunks.length, 2);
    assert.deepStrictEqual(hunks.map((h) => describeHunk(text, h)), ['line 2', 'line 5']);
    assert.strictEqual(applyHunks(text, hunks), 'a\nB\nc\nd\nE\nE2\nf\n');
    assert.strictEqual(applyHunks(text, hunks.slice(1)), 'a\nb\nc\nd\nE\nE2\nf\n');
  });

  it('widens an edit inside a line to the whole line', () => {
    const hunks = splitIntoHunks('def f(x):\n    return x\n', [edit(1, 11, 1, 12, 'x + 1')]);
    assert.deepStrictEqual(hunks, [{ start: 10, end: 23, newText: '    return x + 1\n' }]);
  });

  it('merges edits that touch the same line into one hunk', () => {
    const hunks = splitIntoHunks('abc\n', [edit(0, 0, 0, 1, 'A'), edit(0, 2, 0, 3, 'C')]);
    assert.deepStrictEqual(hunks, [{ start: 0, end: 4, newText: 'AbC\n' }]);
  });

  it('handles a new file, pure insertions and a last line without newline', () => {
    assert.deepStrictEqual(splitIntoHunks('', [edit(0, 0, 0, 0, 'x\ny\n')]), [{ start: 0, end: 0, newText: 'x\ny\n' }]);
    const inserted = splitIntoHunks(text, [edit(3, 0, 3, 0, 'new\n')]);
    assert.deepStrictEqual(inserted, [{ start: 6, end: 6, newText: 'new\n' }]);
    assert.strictEqual(describeHunk(text, inserted[0]), 'after line 3');
    const noEol = splitIntoHunks('a\nb', [edit(1, 0, 1, 1, 'B')]);
    assert.strictEqual(applyHunks('a\nb', noEol), 'a\nB');
  });

  it('counts characters in UTF-16 code units, as VS Code negotiates', () => {
    assert.strictEqual(offsetAt('😀x\n', { line: 0, character: 2 }), 2);
    const hunks = splitIntoHunks('😀x\n', [edit(0, 2, 0, 3, 'y')]);
    assert.strictEqual(applyHunks('😀x\n', hunks), '😀y\n');
  });

  it('gives no hunk for an edit that changes nothing', () => {
    assert.deepStrictEqual(splitIntoHunks(text, [edit(1, 0, 2, 0, 'b\n')]), []);
  });
});

describe('HunkDecisions', () => {
  it('is finished once every hunk is decided, and keeps what was accepted', () => {
    const decisions = new HunkDecisions(3);
    decisions.decide(0, 'accepted');
    decisions.decide(2, 'rejected');
    assert.strictEqual(decisions.finished, false);
    decisions.decide(1, 'accepted');
    assert.strictEqual(decisions.finished, true);
    assert.deepStrictEqual(decisions.accepted(['x', 'y', 'z']), ['x', 'y']);
    assert.deepStrictEqual(decisions.shown(['x', 'y', 'z']), ['x', 'y']);
  });

  it('decides the whole edit at once and refuses a hunk that does not exist', () => {
    const decisions = new HunkDecisions(2);
    decisions.decide(0, 'accepted');
    decisions.decideAll('rejected');
    assert.deepStrictEqual(decisions.accepted(['x', 'y']), []);
    assert.throws(() => decisions.decide(2, 'accepted'), RangeError);
  });

  it('takes a decision back with undo, and rejects what is undecided when the review closes', () => {
    const decisions = new HunkDecisions(3);
    decisions.decide(0, 'accepted');
    decisions.decide(1, 'accepted');
    decisions.decide(1, 'pending');
    assert.strictEqual(decisions.finished, false);
    decisions.rejectPending();
    assert.strictEqual(decisions.finished, true);
    assert.deepStrictEqual(decisions.accepted(['x', 'y', 'z']), ['x']);
  });
});
