import * as assert from 'assert';
import {
  endOfInsert,
  isAtCursor,
  type NextEdit,
  nextEditOf,
  PREVIEW_CHARS,
  previewLine,
  type Span,
  splitItems,
} from '../../src/inlineItems';

const span = (sl: number, sc: number, el: number, ec: number): Span => ({
  start: { line: sl, character: sc },
  end: { line: el, character: ec },
});
const cursor = { line: 2, character: 8 };

describe('splitItems', () => {
  it('keeps for ghost text the items without a range or with one holding the cursor on its line', () => {
    const insertion = { insertText: 'name)' };
    const replacing = { insertText: 'greet(name)', range: span(2, 4, 2, 8) };
    const toLineEnd = { insertText: 'x', range: span(2, 8, 2, 20) };
    const { atCursor, away } = splitItems([insertion, replacing, toLineEnd], cursor);
    assert.deepStrictEqual(atCursor, [insertion, replacing, toLineEnd]);
    assert.deepStrictEqual(away, []);
  });

  it('sends the items on another line, or beside the cursor on its line, to the next-edit view, in order', () => {
    const below = { insertText: 'salute', range: span(4, 11, 4, 16) };
    const above = { insertText: 'def salute(name):', range: span(0, 0, 0, 16) };
    const laterOnTheLine = { insertText: 'y', range: span(2, 10, 2, 11) };
    const startsAboveEndsHere = { insertText: 'z', range: span(1, 0, 2, 8) };
    const here = { insertText: 'w' };
    const { atCursor, away } = splitItems([below, here, above, laterOnTheLine, startsAboveEndsHere], cursor);
    assert.deepStrictEqual(atCursor, [here]);
    assert.deepStrictEqual(away, [below, above, laterOnTheLine, startsAboveEndsHere]);
  });

  it('takes a range whose ends are the cursor as at the cursor, and one just past it as away', () => {
    assert.ok(isAtCursor(span(2, 8, 2, 8), cursor));
    assert.ok(!isAtCursor(span(2, 9, 2, 9), cursor));
    assert.ok(!isAtCursor(span(2, 0, 2, 7), cursor));
  });
});

describe('nextEditOf', () => {
  it('takes a string as plain text and a snippet’s value as a snippet', () => {
    assert.deepStrictEqual(nextEditOf({ insertText: 'salute', range: span(4, 11, 4, 16) }), {
      range: span(4, 11, 4, 16),
      text: 'salute',
      snippet: false,
    });
    assert.deepStrictEqual(nextEditOf({ insertText: { value: 'salute(${1:name})' }, range: span(4, 0, 4, 5) }), {
      range: span(4, 0, 4, 5),
      text: 'salute(${1:name})',
      snippet: true,
    });
  });
});

describe('endOfInsert', () => {
  it('puts the cursor after the inserted text, on its last line', () => {
    assert.deepStrictEqual(endOfInsert({ line: 4, character: 11 }, 'salute'), { line: 4, character: 17 });
    assert.deepStrictEqual(endOfInsert({ line: 4, character: 11 }, ''), { line: 4, character: 11 });
    assert.deepStrictEqual(endOfInsert({ line: 4, character: 11 }, 'a\n    bc'), { line: 5, character: 6 });
    assert.deepStrictEqual(endOfInsert({ line: 4, character: 11 }, 'a\n'), { line: 5, character: 0 });
  });
});

describe('previewLine', () => {
  const edit = (range: Span, text: string): NextEdit => ({ range, text, snippet: false });
  const line = '    print(greet("world"))';

  it('shows the line as it will read once the edit is accepted', () => {
    assert.strictEqual(previewLine(line, edit(span(5, 10, 5, 15), 'salute')), 'print(salute("world"))');
    assert.strictEqual(previewLine(line, edit(span(5, 10, 5, 15), '')), 'print(("world"))');
    assert.strictEqual(previewLine(line, edit(span(5, 25, 5, 25), '  # done')), 'print(greet("world"))  # done');
  });

  it('marks an edit of more lines than one', () => {
    assert.strictEqual(previewLine(line, edit(span(5, 4, 5, 25), 'x = 1\n    print(x)')), 'x = 1 …');
    assert.strictEqual(previewLine(line, edit(span(5, 4, 7, 0), 'pass')), 'pass …');
  });

  it('cuts a long preview', () => {
    const shown = previewLine('', edit(span(0, 0, 0, 0), 'x'.repeat(10000)));
    assert.strictEqual(shown, `${'x'.repeat(PREVIEW_CHARS)}…`);
  });
});
