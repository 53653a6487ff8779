import * as assert from 'assert';
import { Transcript } from '../../src/transcript';

function channel() {
  let text = '';
  return {
    get text() {
      return text;
    },
    append: (piece: string) => (text += piece),
    appendLine: (line: string) => (text += `${line}\n`),
  };
}

describe('transcript', () => {
  it('streams text, puts steps on their own lines, and ends with the server\'s outcome', () => {
    const out = channel();
    const transcript = new Transcript(out);
    transcript.started('fix the test', 'src/app.py');
    transcript.text('Let me ');
    transcript.text('look.');
    transcript.step({ tool: 'bash', summary: 'pytest -q', state: 'started' });
    transcript.step({ tool: 'bash', summary: 'pytest -q', state: 'failed', detail: 'exit code 1' });
    transcript.ended({
      status: 'done',
      summary: 'Fixed it.',
      steps: 2,
      edits: { applied: 1, rejected: 0 },
      outcome: 'done: 2 steps, 1 edit applied, 0 rejected, 812 tokens in, 164 out',
    });
    assert.strictEqual(
      out.text,
      [
        '▶ fix the test  (src/app.py)',
        'Let me look.',
        '  ⚙ bash: pytest -q',
        '  ✗ bash: pytest -q — exit code 1',
        '■ done: 2 steps, 1 edit applied, 0 rejected, 812 tokens in, 164 out',
        '',
      ].join('\n'),
    );
  });

  it('says what went wrong when a task did not finish', () => {
    const out = channel();
    new Transcript(out).ended({
      status: 'failed',
      summary: 'No Anthropic API key is set.',
      steps: 0,
      outcome: 'failed: 0 steps, 0 edits applied, 0 rejected, no tokens',
    });
    assert.strictEqual(
      out.text,
      '■ failed: 0 steps, 0 edits applied, 0 rejected, no tokens\n  No Anthropic API key is set.\n',
    );
  });

  it('puts a subagent\'s steps under the task\'s step, named', () => {
    const out = channel();
    const transcript = new Transcript(out);
    transcript.step({ tool: 'agent', summary: 'find greet', state: 'started' });
    transcript.subagent({ subagent: 'agent-1', state: 'started', type: 'Explore', description: 'find greet', depth: 1 });
    transcript.step({ tool: 'read_file', summary: 'app.py', state: 'started', subagent: 'agent-1' });
    transcript.step({ tool: 'read_file', summary: 'app.py', state: 'succeeded', detail: 'read app.py', subagent: 'agent-1' });
    transcript.subagent({ subagent: 'agent-1', state: 'succeeded', detail: 'Explore agent-1: done · 2 steps' });
    assert.strictEqual(
      out.text,
      [
        '  ⚙ agent: find greet',
        '    ▸ Explore agent-1: find greet',
        '      [agent-1] ⚙ read_file: app.py',
        '      [agent-1] ✓ read_file: app.py — read app.py',
        '',
      ].join('\n'),
    );
  });
});
