// End-to-end: inline completions (the server's `completions` setting) in VS Code's own ghost
// text, against the tests' fake fill-in-the-middle endpoint (`python -m fake_api --format
// completions`), which answers every request with FIM_ANSWER.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import type { Editor, FakeApi } from './codeServer';

export const FIM_ANSWER = 'a*b';

/** The file typed in: the cursor goes after its last `return`, the end of the file. */
export const CALC = ['def add(a, b):', '    return a + b', '', '', 'def mul(a, b):', '    return'].join('\n');

/** The user settings that turn completions on, with the fake as an OpenAI-format server (a
 * loopback server needs no key). No debounce: the test waits for nothing it need not. */
export function completionSettings(fim: FakeApi): Record<string, unknown> {
  return {
    'agentls.completions': { enabled: true, model: 'openai/e2e-fim', baseUrl: `${fim.url}/v1`, debounceMs: 0 },
  };
}

interface FimRequest {
  path: string;
  body: { prompt?: string; suffix?: string; max_tokens?: number };
}

/** A space typed after `return` brings the fake's text as ghost text; Tab inserts it, and
 * the saved file has it. The model was asked with the text cut at the cursor. */
export async function ghostText(editor: Editor, fim: FakeApi, workspace: string, shots: string): Promise<void> {
  const { page } = editor;
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'calc.py' }).first().click();
  await page.locator('.tab.active', { hasText: 'calc.py' }).waitFor();
  const lines = page.locator('.editor-instance .monaco-editor .view-lines').first();
  await lines.click();
  await page.keyboard.press('ControlOrMeta+End');
  const asked = Date.now();
  await page.keyboard.type(' ');
  // The ghost text is coloured as code: one span per token, each of this class.
  const ghost = page.locator('.editor-instance .monaco-editor .ghost-text-decoration');
  await ghost.first().waitFor({ timeout: 30000 });
  console.log(`a key typed -> ghost text shown: ${Date.now() - asked} ms`);
  assert.strictEqual((await ghost.allTextContents()).join(''), FIM_ANSWER);
  await page.screenshot({ path: path.join(shots, 'ghost-text.png') });
  await page.keyboard.press('Tab');
  await page.keyboard.press('ControlOrMeta+S');
  const saved = `${CALC} ${FIM_ANSWER}`;
  const deadline = Date.now() + 10000;
  while (fs.readFileSync(path.join(workspace, 'calc.py'), 'utf8') !== saved && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.strictEqual(fs.readFileSync(path.join(workspace, 'calc.py'), 'utf8'), saved, 'Tab inserted the model\'s text');

  const requests = await fim.requests<FimRequest>();
  const cut = requests.filter((request) => request.body.prompt?.endsWith('def mul(a, b):\n    return '));
  assert.ok(cut.length > 0, `no request cut at the cursor: ${JSON.stringify(requests.map((r) => [r.path, r.body.prompt?.slice(-20)]))}`);
  assert.strictEqual(cut[0].path, '/v1/completions');
  assert.strictEqual(cut[0].body.suffix, '');
}
