import * as assert from 'assert';
import { answerElicit, type FormApi } from '../../src/elicit';

const PARAMS = {
  server: 'github',
  prompt: 'The MCP server github asks',
  message: 'Which repository?',
  fields: [
    { name: 'repo', title: 'Repository', description: 'owner/name', type: 'string', choices: null, default: 'me/app', required: true },
    { name: 'private', title: 'private', description: '', type: 'boolean', choices: null, default: false, required: false },
  ],
};

function fakeForm(answers: (string | undefined)[]) {
  const asked: string[] = [];
  const api: FormApi = {
    input: (_title, prompt, value) => {
      asked.push(`input ${prompt} [${value}]`);
      return Promise.resolve(answers.shift());
    },
    pick: (_title, prompt, items) => {
      asked.push(`pick ${prompt} ${items.join('/')}`);
      return Promise.resolve(answers.shift());
    },
  };
  return { api, asked };
}

describe('agent/elicit', () => {
  it('asks each field, its default pre-filled, and sends what was typed', async () => {
    const { api, asked } = fakeForm(['me/app', 'yes']);
    const lines: string[] = [];
    const answer = await answerElicit(api, { line: (text) => lines.push(text) }, PARAMS);
    assert.deepStrictEqual(answer, { action: 'accept', content: { repo: 'me/app', private: 'yes' } });
    assert.deepStrictEqual(asked, ['input Repository (required) — owner/name [me/app]', 'pick private yes/no']);
  });

  it('answers null (cancel) when a field is dismissed', async () => {
    const { api } = fakeForm([undefined]);
    assert.strictEqual(await answerElicit(api, { line: () => undefined }, PARAMS), null);
  });
});
