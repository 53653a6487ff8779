import * as assert from 'assert';
import { checklist, Plan, type PlanItem } from '../../src/plan';
import { Transcript } from '../../src/transcript';

const ITEMS: PlanItem[] = [
  { content: 'Read the tests', status: 'completed' },
  { content: 'Fix the parser', status: 'in_progress' },
  { content: 'Run the tests', status: 'pending' },
];

describe('plan', () => {
  it('marks each item by its state, an unknown state as pending', () => {
    const later = { content: 'Wait', status: 'blocked' } as unknown as PlanItem;
    assert.deepStrictEqual(checklist([...ITEMS, later]), [
      '☑ Read the tests',
      '▶ Fix the parser',
      '☐ Run the tests',
      '☐ Wait',
    ]);
  });

  it('keeps the latest whole list and tells its views', () => {
    const plan = new Plan();
    let told = 0;
    plan.onChange(() => (told += 1));
    plan.update(ITEMS);
    plan.update(ITEMS.slice(0, 1));
    assert.strictEqual(told, 2);
    assert.deepStrictEqual(plan.items, ITEMS.slice(0, 1));
  });

  it('goes into the transcript as a checklist, with text added to the task', () => {
    let text = '';
    const transcript = new Transcript({
      append: (piece: string) => (text += piece),
      appendLine: (line: string) => (text += `${line}\n`),
    });
    transcript.text('Planning');
    transcript.plan(ITEMS);
    transcript.added('also update the README');
    assert.strictEqual(
      text,
      [
        'Planning',
        '  plan:',
        '    ☑ Read the tests',
        '    ▶ Fix the parser',
        '    ☐ Run the tests',
        '  ＋ added to the task: also update the README',
        '',
      ].join('\n'),
    );
  });
});
