// A task's subagents in its chat reply: each one's steps live while it works, then the whole
// subagent as one block. VS Code's stable chat API (1.104) has no part an extension can fold:
// the Chat view's Markdown sanitizer drops <details> and <summary>, and the progress parts
// that group ("task" progress, thinking) are proposed API, closed to a published extension.
// (The Chat view of code-server 4.139 does fold a reply's progress lines, the live steps,
// into its "Completed N steps" list once the reply goes on.)
// Reply parts cannot be changed once sent and subagents run at once, so a subagent's steps
// are kept until it ends and then sent together, quoted under its line: never interleaved
// with another's. No `vscode` import (unit-tested).
import type { StepParams } from './transcript';

/** `agent/subagent` (docs/protocol.md): a subagent starts, then ends. */
export interface SubagentParams {
  token?: unknown;
  subagent: string;
  parentStep?: string;
  state: 'started' | 'succeeded' | 'failed';
  type?: string;
  description?: string;
  depth?: number;
  /** At its end: its figures, `Explore agent-1: done · 5 steps · 12.4k tokens · $0.0123`. */
  detail?: string;
}

/** What the parts are sent to: the chat reply's progress and Markdown. */
export interface ReplyParts {
  progress(message: string): void;
  markdown(text: string): void;
}

interface Running {
  name: string;
  description: string;
  depth: number;
  steps: string[];
}

/** Text shown as it is, not as Markdown (the server's words, a command, a path). */
export function markdownText(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');
}

export class SubagentParts {
  private readonly running = new Map<string, Running>();
  /** The figures of the blocks sent, until the `agent` step's end repeats them. */
  private readonly told = new Set<string>();

  constructor(private readonly parts: ReplyParts) {}

  started(params: SubagentParams): void {
    const name = params.type ? `${params.type} ${params.subagent}` : params.subagent;
    const description = params.description ?? '';
    this.running.set(params.subagent, { name, description, depth: params.depth ?? 1, steps: [] });
    this.parts.progress(description ? `${name}: ${description}` : name);
  }

  /** A subagent's step: shown as progress when it starts, kept for its block when it ends. */
  step(step: StepParams): void {
    const what = step.summary ? `${step.tool}: ${step.summary}` : step.tool;
    const subagent = step.subagent ?? '';
    const running = this.running.get(subagent);
    if (step.state === 'started') {
      this.parts.progress(`${running?.name ?? subagent} · ${what}`);
      return;
    }
    if (!running) {
      return; // its end came first: its block is out, and says how it went
    }
    const mark = step.state === 'succeeded' ? '✓' : '✗';
    running.steps.push(`${mark} ${markdownText(what)}${step.detail ? ` — ${markdownText(step.detail)}` : ''}`);
  }

  ended(params: SubagentParams): void {
    const running = this.running.get(params.subagent);
    this.running.delete(params.subagent);
    this.parts.markdown(block(running, params));
    if (params.detail) {
      this.told.add(params.detail);
    }
  }

  /** Whether the task's `agent` step that ended with `detail` only repeats a block's line
   * (its result's last line is the subagent's figures). */
  repeats(detail: string | undefined): boolean {
    return detail !== undefined && this.told.delete(detail);
  }

  /** The task ended with subagents whose end never came (the server stopped): say so. */
  endAll(): void {
    for (const [subagent, running] of [...this.running]) {
      this.running.delete(subagent);
      this.parts.markdown(block(running, { subagent, state: 'failed', detail: `${running.name}: ended with the task` }));
    }
  }
}

/** The subagent's line (how it went, its figures) and its steps quoted under it; a nested
 * subagent's block is quoted once more per level. */
function block(running: Running | undefined, params: SubagentParams): string {
  const mark = params.state === 'succeeded' ? '✓' : '✗';
  const title = running?.description ? `**${markdownText(running.description)}**` : `**${params.subagent}**`;
  const figures = params.detail ?? running?.name ?? params.subagent;
  const quote = '> '.repeat(Math.max(0, (running?.depth ?? 1) - 1));
  const lines = [`${quote}${mark} ${title} — ${markdownText(figures)}`];
  const steps = running?.steps ?? [];
  if (steps.length) {
    lines.push(`${quote}>`, ...steps.map((step) => `${quote}> ${step}  `));
  }
  return `${lines.join('\n')}\n\n`;
}
