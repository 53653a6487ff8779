// Who hears a task's streamed text, steps and plan besides the transcript: the chat request
// that started it, found by the task's progress token. No `vscode` import (unit-tested).
import type { PlanItem } from './plan';
import type { SubagentParams } from './subagentParts';
import type { StepParams } from './transcript';

export interface TaskListener {
  text?(text: string): void;
  step?(step: StepParams): void;
  plan?(items: PlanItem[]): void;
  /** A subagent starts or ends (`agent/subagent`); its steps come to `step`, named. */
  subagent?(params: SubagentParams): void;
  /** Kept out of the transcript (a plain chat answer is not a task's log). */
  quiet?: boolean;
}

export class TaskEvents {
  private readonly listeners = new Map<string, TaskListener>();

  /** `listener` hears what carries `token` until disposed. */
  listen(token: string, listener: TaskListener): { dispose(): void } {
    this.listeners.set(token, listener);
    return { dispose: () => this.listeners.delete(token) };
  }

  of(token: unknown): TaskListener | undefined {
    return typeof token === 'string' ? this.listeners.get(token) : undefined;
  }
}
