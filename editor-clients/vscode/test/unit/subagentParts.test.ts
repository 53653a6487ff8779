import * as assert from 'assert';
import { SubagentParts } from '../../src/subagentParts';

function reply() {
  const parts: string[] = [];
  return {
    parts,
    progress: (message: string) => parts.push(`progress: ${message}`),
    markdown: (text: string) => parts.push(text),
  };
}

describe('subagent parts', () => {
  it('shows steps live, then each subagent whole, its steps quoted under its line', () => {
    const out = reply();
    const subagents = new SubagentParts(out);
    const start = { parentStep: 'toolu_1', state: 'started' as const, type: 'Explore', depth: 1 };
    subagents.started({ ...start, subagent: 'agent-1', description: 'find alpha' });
    subagents.started({ ...start, subagent: 'agent-2', description: 'find beta', parentStep: 'toolu_2' });
    // The two run at once: their steps come interleaved.
    subagents.step({ tool: 'read_file', summary: 'a.py', state: 'started', subagent: 'agent-1' });
    subagents.step({ tool: 'grep', summary: 'beta', state: 'started', subagent: 'agent-2' });
    subagents.step({ tool: 'grep', summary: 'beta', state: 'failed', detail: 'no match', subagent: 'agent-2' });
    subagents.step({ tool: 'read_file', summary: 'a.py', state: 'succeeded', detail: 'read a.py', subagent: 'agent-1' });
    subagents.ended({ subagent: 'agent-2', state: 'succeeded', detail: 'Explore agent-2: done · 1 step · 90 tokens' });
    subagents.ended({ subagent: 'agent-1', state: 'succeeded', detail: 'Explore agent-1: done · 2 steps · 220 tokens' });
    assert.deepStrictEqual(out.parts, [
      'progress: Explore agent-1: find alpha',
      'progress: Explore agent-2: find beta',
      'progress: Explore agent-1 · read_file: a.py',
      'progress: Explore agent-2 · grep: beta',
      '✓ **find beta** — Explore agent\\-2: done · 1 step · 90 tokens\n>\n> ✗ grep: beta — no match  \n\n',
      '✓ **find alpha** — Explore agent\\-1: done · 2 steps · 220 tokens\n>\n> ✓ read\\_file: a\\.py — read a\\.py  \n\n',
    ]);
    // The task's `agent` steps end with the same figures: said once.
    assert.ok(subagents.repeats('Explore agent-1: done · 2 steps · 220 tokens'));
    assert.ok(!subagents.repeats('Explore agent-1: done · 2 steps · 220 tokens'));
    assert.ok(!subagents.repeats('No subagent type \'x\'; the types are Explore.'));
  });

  it('quotes a nested subagent once more, and ends those the task left running', () => {
    const out = reply();
    const subagents = new SubagentParts(out);
    subagents.started({ subagent: 'agent-1', state: 'started', type: 'general-purpose', description: 'fix it', depth: 1 });
    subagents.started({ subagent: 'agent-2', state: 'started', type: 'Explore', description: 'look', depth: 2 });
    subagents.ended({ subagent: 'agent-2', state: 'failed', detail: 'Explore agent-2: cancelled · 0 steps' });
    subagents.endAll();
    assert.deepStrictEqual(out.parts.slice(2), [
      '> ✗ **look** — Explore agent\\-2: cancelled · 0 steps\n\n',
      '✗ **fix it** — general\\-purpose agent\\-1: ended with the task\n\n',
    ]);
    subagents.endAll();
    assert.strictEqual(out.parts.length, 4);
  });

  it('keeps Markdown in a description or step as text', () => {
    const out = reply();
    const subagents = new SubagentParts(out);
    subagents.started({ subagent: 'agent-1', state: 'started', description: '<img src=x> *bold*' });
    subagents.ended({ subagent: 'agent-1', state: 'succeeded' });
    assert.strictEqual(out.parts[1], '✓ **\\<img src=x\\> \\*bold\\*** — agent\\-1\n\n');
  });
});
