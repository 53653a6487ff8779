// The task transcript: the model's streamed text, each tool step, and how the task ended.
import { checklist, type PlanItem } from './plan';
import type { SubagentParams } from './subagentParts';
import type { Lines } from './vscodeApi';

export interface StepParams {
  token?: unknown;
  tool: string;
  summary: string;
  state: 'started' | 'succeeded' | 'failed';
  detail?: string;
  /** A command's last lines of output (bash steps). */
  outputTail?: string;
  /** A subagent's own step: its id (`agent-1`) and the `agent` step's that started it. */
  subagent?: string;
  parentStep?: string;
}

export interface TaskResult {
  status: string;
  summary?: string;
  steps?: number;
  edits?: Record<string, number>;
  /** The server's line for how the task ended, as every front end shows it. */
  outcome: string;
  /** The saved session the task went into. */
  session?: string;
}

/** The server's outcome line (its tokens, cache share and cost included), and what went
 * wrong when the task did not finish; the raw usage stays in the answer, not the log. */
export function formatEnd(result: TaskResult): string[] {
  const lines = [`■ ${result.outcome}`];
  // When done, the summary is the model's last text, already streamed above.
  if (result.summary && result.status !== 'done') {
    lines.push(`  ${result.summary.split('\n').join('\n  ')}`);
  }
  return lines;
}

export class Transcript {
  private midLine = false;

  constructor(private readonly out: Lines) {}

  started(task: string, where: string | undefined): void {
    this.line(`▶ ${task}${where ? `  (${where})` : ''}`);
  }

  text(piece: string): void {
    this.out.append(piece);
    this.midLine = !piece.endsWith('\n');
  }

  step(step: StepParams): void {
    // A subagent's steps go under the task's `agent` step, named: subagents run at once.
    const indent = step.subagent ? `      [${step.subagent}] ` : '  ';
    const what = `${step.tool}: ${step.summary}`;
    if (step.state === 'started') {
      this.line(`${indent}⚙ ${what}`);
    } else {
      const mark = step.state === 'succeeded' ? '✓' : '✗';
      this.line(`${indent}${mark} ${what}${step.detail ? ` — ${step.detail}` : ''}`);
    }
  }

  /** A subagent's start, naming the `[agent-1]` of its steps (its `agent` step's end says
   * how it went). */
  subagent(params: SubagentParams): void {
    if (params.state === 'started') {
      const name = params.type ? `${params.type} ${params.subagent}` : params.subagent;
      const indent = `    ${'  '.repeat(Math.max(0, (params.depth ?? 1) - 1))}`;
      this.line(`${indent}▸ ${name}${params.description ? `: ${params.description}` : ''}`);
    }
  }

  plan(items: readonly PlanItem[]): void {
    this.line('  plan:');
    for (const line of checklist(items)) {
      this.line(`    ${line}`);
    }
  }

  /** Text the user added to the running task (agent.steer accepted it). */
  added(text: string): void {
    this.line(`  ＋ added to the task: ${text}`);
  }

  ended(result: TaskResult): void {
    for (const line of formatEnd(result)) {
      this.line(line);
    }
  }

  line(text: string): void {
    if (this.midLine) {
      this.out.appendLine('');
      this.midLine = false;
    }
    this.out.appendLine(text);
  }
}
