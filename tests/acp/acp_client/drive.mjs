// A real ACP client (the protocol's TypeScript SDK) driving an agent through a scenario, for
// the tests: `node drive.mjs SCENARIO.json -- AGENT_COMMAND...`. It prints one JSON object a
// line for everything it saw (updates, permission questions, file reads and writes, answers),
// so the Python test asserts on what a real client received. It offers fs/read_text_file and
// fs/write_text_file (unless "fs": false) and writes whatever it is sent to disk, without a
// review of its own, as CodeCompanion and agent-shell do: the agent must ask first.
//
// Scenario: {"cwd": "/abs", "fs": true, "steps": [
//   {"op": "new", "mcpServers"?: [...]},
//   {"op": "prompt", "text": "...", "permission"?: "allow"|"allow_always"|"reject",
//    "cancelOnExecute"?: true, "attach"?: {"uri": "file:///...", "text": "..."}},
//   {"op": "setMode", "mode": "default"|"acceptEdits"|"plan"|"always"},
//   {"op": "list"},
//   {"op": "load", "sessionId": "..." | "$last"}
// ]}
import { spawn } from 'node:child_process';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { client, methods, ndJsonStream } from '@agentclientprotocol/sdk';

const [scenarioPath, separator, ...agentCommand] = process.argv.slice(2);
if (!scenarioPath || separator !== '--' || agentCommand.length === 0) {
  console.error('usage: node drive.mjs SCENARIO.json -- AGENT_COMMAND...');
  process.exit(2);
}
const scenario = JSON.parse(await readFile(scenarioPath, 'utf8'));
const started = performance.now();
// Each event carries `t`, milliseconds since the start, so a test can time a cancel.
const emit = (event) =>
  process.stdout.write(JSON.stringify({ ...event, t: performance.now() - started }) + '\n');

const agent = spawn(agentCommand[0], agentCommand.slice(1), {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

let permission = 'allow';
let cancelOnExecute = false;
let sessionId;

const app = client({ name: 'agentls-test-client' })
  .onNotification(methods.client.session.update, async ({ params, agent: peer }) => {
    emit({ kind: 'update', update: params.update });
    const update = params.update;
    if (cancelOnExecute && update.sessionUpdate === 'tool_call' && update.kind === 'execute') {
      cancelOnExecute = false;
      // Give the command a moment to start, as a user would take to click.
      setTimeout(() => {
        emit({ kind: 'cancel' });
        peer.notify(methods.agent.session.cancel, { sessionId });
      }, 300);
    }
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    emit({ kind: 'permission', request: params });
    const option = params.options.find((o) => o.optionId === permission);
    return option
      ? { outcome: { outcome: 'selected', optionId: option.optionId } }
      : { outcome: { outcome: 'cancelled' } };
  })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    emit({ kind: 'read', params });
    return { content: await readFile(params.path, 'utf8') };
  })
  .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
    emit({ kind: 'write', params });
    await mkdir(dirname(params.path), { recursive: true });
    await writeFile(params.path, params.content, 'utf8');
    return {};
  });

async function answer(op, call) {
  try {
    const result = await call();
    emit({ kind: 'response', op, result });
    return result;
  } catch (error) {
    emit({ kind: 'response', op, error: { code: error.code, message: error.message, data: error.data } });
    return undefined;
  }
}

try {
  await app.connectWith(stream, async (ctx) => {
    const fs = scenario.fs ?? true;
    await answer('initialize', () =>
      ctx.request(methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: fs, writeTextFile: fs } },
      }),
    );
    for (const step of scenario.steps) {
      if (step.op === 'new') {
        const result = await answer('new', () =>
          ctx.request(methods.agent.session.new, {
            cwd: scenario.cwd,
            mcpServers: step.mcpServers ?? [],
          }),
        );
        sessionId = result?.sessionId;
      } else if (step.op === 'prompt') {
        permission = step.permission ?? 'allow';
        cancelOnExecute = step.cancelOnExecute ?? false;
        const prompt = [{ type: 'text', text: step.text }];
        if (step.attach) {
          prompt.push({
            type: 'resource',
            resource: { uri: step.attach.uri, text: step.attach.text, mimeType: 'text/plain' },
          });
        }
        await answer('prompt', () => ctx.request(methods.agent.session.prompt, { sessionId, prompt }));
      } else if (step.op === 'setMode') {
        await answer('setMode', () =>
          ctx.request(methods.agent.session.setMode, { sessionId, modeId: step.mode }),
        );
      } else if (step.op === 'list') {
        await answer('list', () => ctx.request(methods.agent.session.list, { cwd: scenario.cwd }));
      } else if (step.op === 'load') {
        const id = step.sessionId === '$last' ? sessionId : step.sessionId;
        await answer('load', () =>
          ctx.request(methods.agent.session.load, { sessionId: id, cwd: scenario.cwd, mcpServers: [] }),
        );
        sessionId = id;
      } else {
        throw new Error(`unknown step ${step.op}`);
      }
    }
  });
} finally {
  agent.stdin.end();
  const exited = new Promise((resolve) => agent.once('exit', (code) => resolve(code)));
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 10000));
  const code = await Promise.race([exited, timeout]);
  if (code === 'timeout') agent.kill('SIGKILL');
  emit({ kind: 'exit', code });
}
