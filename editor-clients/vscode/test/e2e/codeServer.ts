// Starting what the end-to-end test drives: the fake Messages API, code-server with the
// extension installed, and Debian's chromium through playwright-core.
import { type ChildProcess, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** A Messages API request body, as far as the scenarios read it. */
export interface ModelRequest {
  messages: { role: string; content: unknown }[];
  tools: { name: string }[];
}

export interface Paths {
  node24: string;
  codeServer: string;
  chromium: string;
  python: string;
  repo: string;
  vsix: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set; run editor-clients/vscode/scripts/setup-e2e.sh and see tests/editor_clients/test_vscode_extension.py`);
  }
  return value;
}

export function pathsFromEnv(): Paths {
  return {
    node24: required('AGENTLS_E2E_NODE24'),
    codeServer: required('AGENTLS_E2E_CODE_SERVER'),
    chromium: required('AGENTLS_E2E_CHROMIUM'),
    python: required('AGENTLS_E2E_PYTHON'),
    repo: required('AGENTLS_E2E_REPO'),
    vsix: required('AGENTLS_E2E_VSIX'),
  };
}

/** A process in its own process group (like setsid), so the whole group can be stopped. */
class Group {
  readonly output: string[] = [];

  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (data: Buffer) => this.output.push(data.toString()));
    child.stderr?.on('data', (data: Buffer) => this.output.push(data.toString()));
  }

  /** kill -- -PGID: code-server's file watchers outlive a kill of its main process. */
  stop(): void {
    if (this.child.pid !== undefined) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  async waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const match = this.output.join('').match(pattern);
      if (match) {
        return match;
      }
      if (this.child.exitCode !== null) {
        break;
      }
      await sleep(50);
    }
    throw new Error(`no ${pattern} from the process; it said:\n${this.output.join('').slice(-3000)}`);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export class FakeApi {
  private constructor(
    private readonly group: Group,
    readonly url: string,
  ) {}

  /** `python -m fake_api` from the tests' folder; `args` choose another fake than the
   * Messages API's (`--format completions` for inline completions' endpoints). */
  static async start(paths: Paths, ...args: string[]): Promise<FakeApi> {
    const group = new Group(
      spawn(paths.python, ['-m', 'fake_api', '--port', '0', ...args], {
        cwd: path.join(paths.repo, 'tests'),
        detached: true,
      }),
    );
    const [, url] = await group.waitFor(/listening on (http:\/\/\S+)/, 15000);
    return new FakeApi(group, url);
  }

  async post(route: string, body: unknown): Promise<void> {
    const response = await fetch(`${this.url}${route}`, { method: 'POST', body: JSON.stringify(body) });
    if (!response.ok) {
      throw new Error(`fake API ${route}: ${response.status} ${await response.text()}`);
    }
  }

  /** The request bodies the server sent, i.e. what the model was told. */
  async requests<Request = ModelRequest>(): Promise<Request[]> {
    return (await fetch(`${this.url}/_fake/requests`)).json() as Promise<Request[]>;
  }

  stop(): void {
    this.group.stop();
  }
}

export interface Editor {
  page: Page;
  close(): Promise<void>;
}

/** How a profile differs from the usual one: user settings to leave out or add, and the
 * PATH code-server (and so the extension's server) starts with. */
export interface Profile {
  settings?: Record<string, unknown>;
  path?: string;
}

/** The user settings of the usual profile. */
export function usualSettings(paths: Paths): Record<string, unknown> {
  return {
    // code-server saves after 1 s by default; off, or a missing save would be hidden.
    'files.autoSave': 'off',
    'workbench.startupEditor': 'none',
    'agentls.server.command': [paths.python, '-m', 'agentls'],
    'agentls.allowedCommands': ['sleep'],
  };
}

export async function startVsCode(
  paths: Paths,
  root: string,
  workspace: string,
  fake: FakeApi,
  profile: Profile = {},
): Promise<Editor> {
  const dirs = Object.fromEntries(
    ['home', 'user-data', 'extensions', 'xdg-config', 'xdg-data', 'tmp', 'chromium'].map((name) => {
      const dir = path.join(root, name);
      fs.mkdirSync(dir, { recursive: true });
      return [name, dir];
    }),
  );
  fs.mkdirSync(path.join(dirs['user-data'], 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(dirs['user-data'], 'User', 'settings.json'),
    JSON.stringify(profile.settings ?? usualSettings(paths)),
  );
  const env = {
    ...process.env,
    PATH: `${path.dirname(paths.node24)}${path.delimiter}${profile.path ?? process.env.PATH ?? ''}`,
    HOME: dirs.home,
    XDG_CONFIG_HOME: dirs['xdg-config'],
    XDG_DATA_HOME: dirs['xdg-data'],
    TMPDIR: dirs.tmp,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'e2e-fake-key',
  };
  const common = ['--extensions-dir', dirs.extensions, '--user-data-dir', dirs['user-data']];
  execFileSync(paths.codeServer, [...common, '--install-extension', paths.vsix], { env, stdio: 'pipe' });
  const port = await freePort();
  const server = new Group(
    spawn(
      paths.codeServer,
      [
        ...common,
        '--auth', 'none',
        '--bind-addr', `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        workspace,
      ],
      { env, detached: true },
    ),
  );
  let context: BrowserContext | undefined;
  try {
    await server.waitFor(/HTTP server listening/, 30000);
    context = await chromium.launchPersistentContext(dirs.chromium, {
      executablePath: paths.chromium,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const page = context.pages()[0] ?? (await context.newPage());
    // A loaded machine (CI runs tiers side by side) takes longer than playwright's 30 s.
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`, { timeout: 90000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
    const browser = context;
    return {
      page,
      close: async () => {
        await browser.close().catch(() => undefined);
        server.stop();
      },
    };
  } catch (error) {
    await context?.close().catch(() => undefined);
    server.stop();
    throw new Error(`${String(error)}\ncode-server said:\n${server.output.join('').slice(-3000)}`);
  }
}
