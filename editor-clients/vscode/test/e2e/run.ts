// End-to-end: the packaged extension in a real VS Code (code-server) against the tests'
// fake Messages API. Run by tests/editor_clients/test_vscode_extension.py; prints where the screenshots are.
import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Page } from 'playwright-core';
import { type Editor, FakeApi, type ModelRequest, pathsFromEnv, sleep, startVsCode, usualSettings } from './codeServer';
import { CALC, completionSettings, FIM_ANSWER, ghostText } from './inline';

const APP = [
  'def greet(name):',
  '    return "Hello " + name',
  '',
  '',
  'def main():',
  '    print(greet("world"))',
  '',
  '',
  'if __name__ == "__main__":',
  '    main()',
  '',
].join('\n');
const APP_PROPOSED = APP.replace('def greet(name):', 'def greet(name: str) -> str:').replace(
  'if __name__ == "__main__":',
  'if __name__ == "__main__":  # entry point',
);
const NOTES = 'a draft of the notes\n';
const LIB_TS = "export function greet(name: string): string {\n  return 'Hello ' + name;\n}\n";
// One error before the agent's edit, which must not be reported as new.
const APP_TS = [
  "import { greet } from './lib';",
  '',
  "const count: number = 'one';",
  "console.log(greet('you'), count);",
  '',
].join('\n');

const toolUse = (name: string, input: object) => ({ tool_use: { name, input } });

/** The tool_result text the model got in a request (its last user message). */
function toolResult(request: ModelRequest): string {
  const last = request.messages[request.messages.length - 1];
  return JSON.stringify(last.content);
}

async function palette(page: Page, text: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(text);
}

// The row is clicked, not taken with Enter: the palette's fuzzy match may put another
// command first ("Agent: Add to Running Task" for "Agent: Run Task").
async function runCommand(page: Page, title: string): Promise<void> {
  await palette(page, `>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().click();
}

// From the Explorer, not Quick Open: its file search can take longer than a minute to
// answer on a loaded machine.
async function openFile(page: Page, name: string): Promise<void> {
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first().click();
  await page.locator('.tab.active', { hasText: name }).waitFor();
}

/** Waits until the palette offers `title`: a fresh profile scans its extensions first. */
async function untilListed(page: Page, title: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await palette(page, `>${title}`);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    const listed = await row.waitFor({ timeout: 10000 }).then(() => true, () => false);
    await page.keyboard.press('Escape');
    if (listed) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`the palette never offered ${title}`);
    }
  }
}

/** Agent: Run Task from the palette; returns when the task text has been entered. */
async function runTask(page: Page, task: string, shots?: string): Promise<void> {
  await palette(page, '>Agent: Run Task');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Agent: Run Task' }).first();
  await row.waitFor();
  if (shots) {
    await page.screenshot({ path: path.join(shots, 'palette.png') });
  }
  await row.click();
  await page.locator('.quick-input-widget', { hasText: 'What should the agent do?' }).waitFor();
  await page.locator('.quick-input-widget input').fill(task);
  await page.keyboard.press('Enter');
}

async function taskEnded(page: Page, status: string): Promise<void> {
  await page.locator('.statusbar-item', { hasText: `Agent: ${status}` }).waitFor({ timeout: 30000 });
}

function lens(page: Page, text: string) {
  return page.locator('.codelens-decoration a', { hasText: text }).first();
}

async function acceptOneHunkRejectAnother(editor: Editor, fake: FakeApi, workspace: string, shots: string) {
  const { page } = editor;
  await fake.post('/_fake/script', [
    toolUse('write_file', { path: 'app.py', content: APP_PROPOSED }),
    toolUse('bash', { command: 'cat app.py' }),
    { text: 'Annotated greet().' },
  ]);
  await openFile(page, 'app.py');
  await runTask(page, 'annotate greet', shots);
  const asked = Date.now();
  await page.locator('.statusbar-item', { hasText: 'Agent: write_file: app.py' }).waitFor({ timeout: 30000 });
  console.log(`Run Task -> the step reported, first task: ${Date.now() - asked} ms`);
  await lens(page, 'Accept hunk 1 of 2').waitFor({ timeout: 30000 });
  const reviewShownMs = Date.now() - asked;
  await page.screenshot({ path: path.join(shots, 'review.png') });
  await lens(page, 'Accept hunk 1 of 2').click();
  await lens(page, 'Accepted hunk 1 of 2').waitFor();
  await lens(page, 'Reject').click();
  const dialog = page.locator('.monaco-dialog-box', { hasText: 'The agent wants to run a command' });
  await dialog.waitFor({ timeout: 20000 });
  assert.ok((await dialog.innerText()).includes('cat app.py'));
  await dialog.getByRole('button', { name: 'Allow', exact: true }).click();
  await taskEnded(page, 'done');

  const expected = APP.replace('def greet(name):', 'def greet(name: str) -> str:');
  assert.strictEqual(fs.readFileSync(path.join(workspace, 'app.py'), 'utf8'), expected);
  const requests = await fake.requests();
  assert.strictEqual(requests.length, 3);
  const review = toolResult(requests[1]);
  assert.match(review, /Edited app\.py: 1 of 2 hunks accepted\. Rejected:/);
  assert.match(review, /# entry point/);
  // The accepted hunk was saved before the answer: the next bash step sees it.
  const cat = toolResult(requests[2]);
  assert.match(cat, /def greet\(name: str\) -> str:/);
  assert.doesNotMatch(cat, /# entry point/);
  return reviewShownMs;
}

async function wholeEdits(editor: Editor, fake: FakeApi, workspace: string) {
  const { page } = editor;
  await fake.post('/_fake/reset', {});
  await fake.post('/_fake/script', [
    toolUse('write_file', { path: 'new_module.py', content: 'VALUE = 1\n' }),
    toolUse('edit_file', { path: 'notes.txt', old_text: 'draft', new_text: 'final' }),
    { text: 'One file created, the notes left alone.' },
  ]);
  await runCommand(page, 'Agent: New Session');
  await page.locator('.notification-toast', { hasText: 'new session' }).waitFor();
  await runTask(page, 'add a module and finish the notes');
  const asked = Date.now();
  const accept = page.getByRole('button', { name: 'Accept Whole Edit' });
  await accept.waitFor({ timeout: 30000 });
  const reviewShownMs = Date.now() - asked;
  await accept.click();
  const reject = page.getByRole('button', { name: 'Reject Whole Edit' });
  await page.locator('.tab', { hasText: 'notes.txt' }).waitFor({ timeout: 30000 });
  await reject.click();
  await taskEnded(page, 'done');

  assert.strictEqual(fs.readFileSync(path.join(workspace, 'new_module.py'), 'utf8'), 'VALUE = 1\n');
  assert.strictEqual(fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8'), NOTES);
  const requests = await fake.requests();
  assert.strictEqual(requests.length, 3);
  assert.strictEqual(requests[0].messages.length, 1, 'New Session started a fresh conversation');
  assert.match(toolResult(requests[1]), /Created new_module\.py: 1 hunk accepted\./);
  assert.match(toolResult(requests[2]), /The edit of notes\.txt was not applied: the user rejected it/);
  return reviewShownMs;
}

/** The editor's eyes: TypeScript's own diagnostics and definitions, through the extension. */
async function editorsEyes(editor: Editor, fake: FakeApi) {
  const { page } = editor;
  await fake.post('/_fake/reset', {});
  await fake.post('/_fake/script', [
    toolUse('edit_file', { path: 'app.ts', old_text: "greet('you')", new_text: 'greet(someone)' }),
    toolUse('definition', { path: 'app.ts', line: 4, symbol: 'greet' }),
    { text: 'Found greet.' },
  ]);
  await runCommand(page, 'Agent: New Session');
  await openFile(page, 'app.ts');
  // TypeScript is up once it underlines the error that is there from the start.
  await page.locator('.squiggly-error').first().waitFor({ timeout: 90000 });
  await runTask(page, 'greet someone');
  const accept = page.getByRole('button', { name: 'Accept Whole Edit' });
  await accept.waitFor({ timeout: 30000 });
  await accept.click();
  await taskEnded(page, 'done');

  const requests = await fake.requests();
  assert.strictEqual(requests.length, 3);
  const tools = requests[0].tools.map((tool) => tool.name);
  for (const name of ['diagnostics', 'definition', 'references', 'symbols']) {
    assert.ok(tools.includes(name), `${name} is offered`);
  }
  const edited = toolResult(requests[1]);
  assert.match(
    edited,
    /Edited app\.ts: 1 hunk accepted\.\\nNew problems the editor reports since this edit:\\napp\.ts:4: error: Cannot find name 'someone'/,
  );
  assert.doesNotMatch(edited, /not assignable/, 'the error there before is not new');
  assert.match(toolResult(requests[2]), /lib\.ts:1: export function greet\(name: string\): string \{/);
}

/** The Chat view's reply text so far (every part, folded ones included). */
async function chatText(page: Page): Promise<string> {
  return (await page.locator('.interactive-session').first().textContent()) ?? '';
}

async function waitForChat(page: Page, pattern: RegExp, timeout = 30000): Promise<string> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const text = await chatText(page);
    if (pattern.test(text)) {
      return text;
    }
    if (Date.now() > deadline) {
      throw new Error(`the Chat view never showed ${pattern}; it shows:\n${text.slice(-2000)}`);
    }
    await sleep(250);
  }
}

/** Types into the Chat view's input; typed again while the input, busy with its
 * @-completion on a loaded machine, dropped keys. */
async function typeInChat(page: Page, text: string): Promise<void> {
  const input = page.locator('.interactive-input-part .monaco-editor').first();
  const words = text.replace(/\s+/g, ' ');
  for (let attempt = 0; ; attempt++) {
    await input.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Backspace');
    await page.keyboard.type(text, { delay: 20 });
    await sleep(500);
    const typed = ((await input.locator('.view-lines').textContent()) ?? '').replace(/\s+/g, ' ');
    if (typed.trim() === words || attempt === 2) {
      break;
    }
  }
}

async function askChat(page: Page, text: string): Promise<void> {
  await typeInChat(page, text);
  await page.keyboard.press('Enter');
}

const SIGN_IN = /sign in/i;

/** @agentls in VS Code's Chat view: a task on the open file, reviewed from the reply's
 * Review button; then a follow-up in the same chat continues the same agentls session, and
 * one more hands a question to a subagent. */
async function chatTask(editor: Editor, fake: FakeApi, workspace: string, shots: string) {
  const { page } = editor;
  await fake.post('/_fake/script', [
    { content: [{ text: 'Adding the annotations now.' }, toolUse('write_file', { path: 'app.py', content: APP_PROPOSED })] },
    { text: 'Annotated greet() from the chat.' },
    { text: 'Still the same conversation.' },
  ]);
  await openFile(page, 'app.py');
  // The Chat view picks agentls's model once the extension has offered it.
  await page.locator('.interactive-input-part', { hasText: 'agentls' }).waitFor({ timeout: 120000 });
  const asked = Date.now();
  await askChat(page, '@agentls annotate greet');
  const review = page.locator('.interactive-session').getByRole('button', { name: 'Review app.py' });
  await review.waitFor({ timeout: 60000 });
  console.log(`chat request -> Review button: ${Date.now() - asked} ms`);
  await waitForChat(page, /Adding the annotations now\./);
  await page.screenshot({ path: path.join(shots, 'chat-review.png') });
  await review.click();
  const accept = page.getByRole('button', { name: 'Accept Whole Edit' });
  await accept.waitFor({ timeout: 30000 });
  await accept.click();
  const reply = await waitForChat(page, /done · 2 steps · 1 edit/);
  await page.screenshot({ path: path.join(shots, 'chat-done.png') });
  assert.match(reply, /✓ write_file: app\.py/);
  assert.match(reply, /Annotated greet\(\) from the chat\./);
  assert.strictEqual(fs.readFileSync(path.join(workspace, 'app.py'), 'utf8'), APP_PROPOSED, 'the edit landed, saved');
  await page.locator('.interactive-session').getByRole('button', { name: 'Undo this task' }).waitFor();

  await askChat(page, '@agentls anything else?');
  await waitForChat(page, /Still the same conversation\./);
  const requests = await fake.requests();
  assert.strictEqual(requests.length, 3);
  assert.ok(requests[2].messages.length > 3, 'the follow-up continued the first task\'s conversation');
  assert.match(JSON.stringify(requests[2].messages[0]), /annotate greet/);
  assert.strictEqual(await page.locator('.monaco-dialog-box', { hasText: SIGN_IN }).count(), 0, 'no sign-in dialog');

  // A subagent: its steps shown while it works, then its block (line, figures, steps).
  await fake.post('/_fake/script', [
    toolUse('agent', { description: 'find greet', prompt: 'Where is greet defined?', subagent_type: 'Explore' }),
    toolUse('read_file', { path: 'app.py' }),
    { text: 'greet is at app.py:1' },
    { text: 'The subagent found it.' },
  ]);
  await askChat(page, '@agentls where is greet?');
  const found = await waitForChat(page, /The subagent found it\./);
  await page.screenshot({ path: path.join(shots, 'chat-subagent.png') });
  assert.match(found, /find greet — Explore agent-1: done · 2 steps/);
  assert.match(found, /✓ read_file: app\.py — /);
  assert.doesNotMatch(found, /✓ agent: find greet/, 'the agent step\'s end repeats the block: left out');
  const subagent = (await fake.requests())[4];
  assert.doesNotMatch(JSON.stringify(subagent.messages), /annotate greet/, 'the subagent saw none of the chat');
  fs.writeFileSync(path.join(workspace, 'app.py'), APP); // as the next scenario expects it
}

/** A folder that would run its own code if the extension started anything from it: an
 * `agentls.py` for `python -m agentls`, and an `agentls` and a `python3` in a folder that the
 * returned PATH entry puts first. Each writes the returned marker. */
function hostileWorkspace(workspace: string): { marker: string; pathEntry: string } {
  const marker = path.join(path.dirname(workspace), 'workspace-code-ran');
  const record = (what: string) => `open(${JSON.stringify(marker)}, "a").write("${what}\\n")\n`;
  fs.writeFileSync(path.join(workspace, 'agentls.py'), record('agentls.py imported'));
  const bin = path.join(workspace, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  for (const name of ['agentls', 'python3', 'python']) {
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho "bin/${name} ran" >> '${marker}'\nexit 0\n`, { mode: 0o755 });
  }
  return { marker, pathEntry: bin };
}

/** Run in the page (a string: the e2e is compiled without the DOM's types). */
const COPY_PICTURE = `(async () => {
  const canvas = document.createElement('canvas');
  canvas.width = 160;
  canvas.height = 90;
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, 160, 90);
  context.fillStyle = '#d02020';
  context.fillRect(12, 10, 60, 40);
  context.fillStyle = '#2040c0';
  context.fillRect(90, 40, 50, 35);
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
  await navigator.clipboard.write([new ClipboardItem({ 'image/png': blob })]);
  const bytes = new Uint8Array(await blob.arrayBuffer());
  return btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''));
})()`;

/** A picture drawn in the page, put on the clipboard as a PNG (as a screenshot tool does);
 * returns the PNG, base64. Opaque colours only: the clipboard's own PNG is then the same
 * pixels, however it encodes them. */
async function copyPicture(page: Page): Promise<string> {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(page.url()).origin });
  return (await page.evaluate(COPY_PICTURE)) as string;
}

/** Two images' sizes, and whether their pixels are the same (pillow, from the tests' Python). */
function comparePictures(python: string, sent: string, received: string): { sent: number[]; received: number[]; same: boolean } {
  const script = [
    'import base64, io, json, sys',
    'from PIL import Image',
    'a, b = (Image.open(io.BytesIO(base64.b64decode(d))).convert("RGBA") for d in json.load(sys.stdin))',
    'print(json.dumps({"sent": a.size, "received": b.size, "same": a.tobytes() == b.tobytes()}))',
  ].join('\n');
  return JSON.parse(execFileSync(python, ['-c', script], { input: JSON.stringify([sent, received]), encoding: 'utf8' }));
}

/** An image pasted into the Chat view's input (Ctrl+V) goes with `@agentls describe the
 * image` to the model: an image block in the request's last user message. */
async function chatImage(editor: Editor, fake: FakeApi, python: string, shots: string) {
  const { page } = editor;
  await fake.post('/_fake/reset', {});
  await fake.post('/_fake/script', [{ text: 'A red box and a blue one on white.' }]);
  const png = await copyPicture(page);
  await typeInChat(page, '@agentls describe the image');
  await page.keyboard.press('ControlOrMeta+V');
  const pill = page.locator('.interactive-input-part .chat-attached-context-attachment', { hasText: 'Pasted Image' });
  await pill.waitFor({ timeout: 30000 });
  await page.screenshot({ path: path.join(shots, 'chat-image.png') });
  // Not struck through as "agentls does not support images": agentls's model takes them.
  assert.doesNotMatch((await pill.getAttribute('class')) ?? '', /\bwarning\b/);
  await page.keyboard.press('Enter');
  await waitForChat(page, /A red box and a blue one on white\./);

  const requests = await fake.requests();
  assert.strictEqual(requests.length, 1);
  const last = requests[0].messages[requests[0].messages.length - 1];
  assert.strictEqual(last.role, 'user');
  const blocks = last.content as { type: string; text?: string; source?: { type: string; media_type: string; data: string } }[];
  const images = blocks.filter((block) => block.type === 'image');
  assert.strictEqual(images.length, 1, JSON.stringify(blocks.map((block) => block.type)));
  const { source } = images[0];
  assert.strictEqual(source?.type, 'base64');
  assert.strictEqual(source?.media_type, 'image/png');
  const compared = comparePictures(python, png, source?.data ?? '');
  assert.deepStrictEqual(compared, { sent: [160, 90], received: [160, 90], same: true });
  assert.match(JSON.stringify(blocks.filter((block) => block.type === 'text')), /describe the image/);
}

/** A fresh profile on a PATH without agentls: the .vsix alone, its first start making the
 * extension's own environment from the bundled wheel, then Agent: Run Task. The workspace
 * holds an `agentls.py` and puts its own `agentls` and `python3` first on PATH: none runs. */
async function freshProfile(paths: ReturnType<typeof pathsFromEnv>, fake: FakeApi, root: string, shots: string) {
  const workspace = path.join(root, 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, 'hello.py'), 'print("hello")\n');
  const trap = hostileWorkspace(workspace);
  const withoutAgentls = [
    trap.pathEntry,
    ...(process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir && !fs.existsSync(path.join(dir, 'agentls'))),
  ].join(path.delimiter);
  await fake.post('/_fake/reset', {});
  await fake.post('/_fake/script', [{ text: 'Hello from the bundled agentls.' }]);
  const started = Date.now();
  const editor = await startVsCode(paths, root, workspace, fake, {
    settings: { 'files.autoSave': 'off', 'workbench.startupEditor': 'none' },
    path: withoutAgentls,
  });
  try {
    const { page } = editor;
    await untilListed(page, 'Agent: Run Task', 180000);
    await runTask(page, 'say hello');
    await page.locator('.notification-toast', { hasText: 'setting up its Python environment' }).waitFor({ timeout: 120000 });
    await page.screenshot({ path: path.join(shots, 'first-start.png') });
    await page.locator('.statusbar-item', { hasText: 'Agent: done' }).waitFor({ timeout: 480000 });
    console.log(`fresh profile: VS Code opened -> first task done ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const storage = path.join(root, 'user-data', 'User', 'globalStorage', 'agentls.agentls');
    const envs = fs.readdirSync(storage).filter((name) => name.startsWith('env-'));
    assert.strictEqual(envs.length, 1, envs.join(', '));
    assert.match(fs.readFileSync(path.join(storage, envs[0], 'agentls-wheel.txt'), 'utf8'), /^agentls-.*\.whl [0-9a-f]{64}\n$/);
    assert.strictEqual((await fake.requests()).length, 1);
    assert.ok(!fs.existsSync(trap.marker), `the workspace's code ran: ${fs.existsSync(trap.marker) ? fs.readFileSync(trap.marker, 'utf8') : ''}`);
  } catch (error) {
    await editor.page.screenshot({ path: path.join(shots, 'fresh-failure.png') }).catch(() => undefined);
    throw error;
  } finally {
    await editor.close();
  }
}

function running(command: string): boolean {
  const found = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return found.split('\n').some((line) => line.trim() === command);
}

/** A long bash step cancelled from its notification's button, or with Agent: Cancel. */
async function cancelLongStep(editor: Editor, fake: FakeApi, shots: string, how: 'button' | 'command') {
  const { page } = editor;
  const command = `sleep ${4000 + Math.floor(Math.random() * 5000)}`;
  await fake.post('/_fake/reset', {});
  await fake.post('/_fake/script', [toolUse('bash', { command }), { text: 'not reached' }]);
  await runTask(page, 'wait a long time');
  const toast = page.locator('.notification-toast', { hasText: `bash: ${command}` });
  await toast.waitFor({ timeout: 30000 });
  for (let i = 0; i < 50 && !running(command); i++) {
    await sleep(100);
  }
  assert.ok(running(command), `${command} should be running`);
  if (how === 'button') {
    await page.screenshot({ path: path.join(shots, 'progress.png') });
    await toast.getByRole('button', { name: 'Cancel' }).click();
  } else {
    await runCommand(page, 'Agent: Cancel');
    await page.locator('.notification-toast', { hasText: 'Agent: cancelling the task.' }).waitFor();
  }
  await taskEnded(page, 'cancelled');
  for (let i = 0; i < 30 && running(command); i++) {
    await sleep(100);
  }
  assert.ok(!running(command), `${command} should be gone after Cancel`);
  assert.strictEqual((await fake.requests()).length, 1, 'no model call after the cancel');
}

/** Agent: Run Task in Background from the palette, shown in the Agent Tasks view, then
 * reviewed from its row and accepted: the user's file changes only then. */
async function backgroundTask(editor: Editor, fake: FakeApi, workspace: string, shots: string) {
  const { page } = editor;
  // A background task needs a git repository: the workspace becomes one, as it is now.
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@e2e', ...args], { cwd: workspace });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'the workspace');
  const before = fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8');
  await fake.post('/_fake/reset', {});
  await fake.post('/_fake/script', [
    toolUse('write_file', { path: 'notes.txt', content: `${before}and a conclusion\n` }),
    { text: 'Finished the notes.' },
  ]);
  await runCommand(page, 'Agent: Run Task in Background');
  await page.locator('.quick-input-widget', { hasText: 'in a worktree of its own' }).waitFor();
  await page.locator('.quick-input-widget input').fill('finish the notes');
  await page.keyboard.press('Enter');
  await runCommand(page, 'Focus on Agent Tasks View');
  const row = page.locator('.monaco-list-row', { hasText: 'finish the notes' }).first();
  await row.waitFor({ timeout: 30000 });
  await page.locator('.monaco-list-row', { hasText: /done · 2 steps/ }).first().waitFor({ timeout: 60000 });
  await page.screenshot({ path: path.join(shots, 'agent-tasks.png') });
  // Nothing of it in the user's file until the review.
  assert.strictEqual(fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8'), before);
  await row.hover();
  await row.locator('.action-label[aria-label="Review Background Task"]').click();
  await lens(page, 'Accept hunk 1 of 1').waitFor({ timeout: 30000 });
  await page.screenshot({ path: path.join(shots, 'background-review.png') });
  await lens(page, 'Accept hunk 1 of 1').click();
  await page.locator('.notifications-toasts', { hasText: '1 of 1 change applied' }).waitFor({ timeout: 30000 });
  await page.locator('.monaco-list-row', { hasText: /reviewed/ }).first().waitFor({ timeout: 30000 });
  await page.screenshot({ path: path.join(shots, 'background-reviewed.png') });
  assert.strictEqual(fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8'), `${before}and a conclusion\n`);
}

async function main(): Promise<void> {
  const paths = pathsFromEnv();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-vscode-e2e-'));
  const shots = process.env.AGENTLS_E2E_SCREENSHOTS ?? path.join(root, 'screenshots');
  fs.mkdirSync(shots, { recursive: true });
  const workspace = path.join(root, 'workspace');
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, 'app.py'), APP);
  fs.writeFileSync(path.join(workspace, 'notes.txt'), NOTES);
  fs.writeFileSync(path.join(workspace, 'lib.ts'), LIB_TS);
  fs.writeFileSync(path.join(workspace, 'app.ts'), APP_TS);
  fs.writeFileSync(path.join(workspace, 'calc.py'), CALC);

  const fake = await FakeApi.start(paths);
  const fim = await FakeApi.start(paths, '--format', 'completions', '--answer', FIM_ANSWER);
  let editor: Editor | undefined;
  const started = Date.now();
  try {
    editor = await startVsCode(paths, root, workspace, fake, {
      settings: { ...usualSettings(paths), ...completionSettings(fim) },
    });
    console.log(`code-server and the workbench up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await chatTask(editor, fake, workspace, shots);
    console.log('@agentls in the Chat view: streamed, reviewed from its Review button, saved, continued');
    await chatImage(editor, fake, paths.python, shots);
    console.log('an image pasted in the Chat view: in the model\'s request, the same pixels');
    await fake.post('/_fake/reset', {});
    await runCommand(editor.page, 'Agent: New Session');
    const cold = await acceptOneHunkRejectAnother(editor, fake, workspace, shots);
    console.log(`Run Task -> review showing, first palette task: ${cold} ms`);
    const warm = await wholeEdits(editor, fake, workspace);
    console.log(`Run Task -> review showing, server already running: ${warm} ms`);
    await editorsEyes(editor, fake);
    console.log('the editor\'s eyes: a new TypeScript error told, a definition found');
    await cancelLongStep(editor, fake, shots, 'button');
    await cancelLongStep(editor, fake, shots, 'command');
    await backgroundTask(editor, fake, workspace, shots);
    console.log('a background task: started from the palette, shown in Agent Tasks, reviewed and accepted');
    await ghostText(editor, fim, workspace, shots);
    console.log('inline completions: ghost text shown as a key was typed, Tab inserted it');
    await editor.close();
    editor = undefined;
    await freshProfile(paths, fake, path.join(root, 'fresh'), shots);
    console.log(`all scenarios passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    await editor?.page.screenshot({ path: path.join(shots, 'failure.png') }).catch(() => undefined);
    throw error;
  } finally {
    console.log(`screenshots: ${shots}`);
    await editor?.close();
    fake.stop();
    fim.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
