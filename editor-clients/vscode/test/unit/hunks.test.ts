import * as assert from 'assert';
import { applyHunks, HunkDecisions, hunksOf, offsetAt, type TextEdit, UnsupportedEdit } from '../../src/hunks';

const edit = (sl: number, sc: number, el: number, ec: number, newText: string): TextEdit => ({
  range: { start: { line: sl, character: sc }, end: { line: el, character: ec } },
  newText,
});

const text = 'a\nb\nc\nd\ne\nf\n';

describe('hunksOf', () => {
  const labels = { a1: { label: 'hunk 1 of 2: change of line 2' }, a2: { label: 'hunk 2 of 2: change of line 5' } };

  it("takes each of the server's edits as one hunk, labelled by its change annotation", () => {
    const edits = [
      { ...edit(4, 0, 5, 0, 'E\n'), annotationId: 'a2' },
      { ...edit(1, 0, 2, 0, 'B\n'), annotationId: 'a1' },
    ];
    const hunks = hunksOf(text, edits, labels);
    assert.deepStrictEqual(hunks, [
      { start: 2, end: 4, newText: 'B\n', label: 'hunk 1 of 2: change of line 2' },
      { start: 8, end: 10, newText: 'E\n', label: 'hunk 2 of 2: change of line 5' },
    ]);
    assert.strictEqual(applyHunks(text, hunks), 'a\nB\nc\nd\nE\nf\n');
    assert.strictEqual(applyHunks(text, hunks.slice(1)), 'a\nb\nc\nd\nE\nf\n');
  });

  it('numbers the hunks of an edit without annotations', () => {
    const hunks = hunksOf(text, [edit(3, 0, 3, 0, 'new\n')], undefined);
    assert.deepStrictEqual(hunks, [{ start: 6, end: 6, newText: 'new\n', label: 'hunk 1 of 1' }]);
  });

  it('refuses edits that overlap, which the server never sends', () => {
    assert.throws(() => hunksOf(text, [edit(0, 0, 2, 0, 'x\n'), edit(1, 0, 3, 0, 'y\n')], undefined), UnsupportedEdit);
  });

  it('handles a new file and a last line without newline', () => {
    assert.strictEqual(applyHunks('', hunksOf('', [edit(0, 0, 0, 0, 'x\ny\n')], undefined)), 'x\ny\n');
    assert.strictEqual(applyHunks('a\nb', hunksOf('a\nb', [edit(1, 0, 1, 1, 'B')], undefined)), 'a\nB');
  });

  it('counts characters in UTF-16 code units, as VS Code negotiates', () => {
    assert.strictEqual(offsetAt('😀x\n', { line: 0, character: 2 }), 2);
    assert.strictEqual(applyHunks('😀x\n', hunksOf('😀x\n', [edit(0, 2, 0, 3, 'y')], undefined)), '😀y\n');
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
