// The small part of the `vscode` API that the extension's logic talks to, behind an
// interface: the unit tests hand in their own object, the extension the real one.
import * as vscode from 'vscode';
import type { FormApi } from './elicit';

/** Where transcript lines go: an output channel, or an array in the tests. */
export interface Lines {
  append(text: string): void;
  appendLine(text: string): void;
}

export interface EditorApi {
  /** A modal warning with a detail text; resolves to the chosen item, undefined if dismissed. */
  askModal(message: string, detail: string, items: string[]): Thenable<string | undefined>;
  showMessage(
    kind: 'error' | 'warning' | 'info',
    message: string,
    items: string[],
  ): Thenable<string | undefined>;
}

export function realEditorApi(): EditorApi {
  return {
    askModal: (message, detail, items) =>
      vscode.window.showWarningMessage(message, { modal: true, detail }, ...items),
    showMessage: (kind, message, items) => {
      const show = {
        error: vscode.window.showErrorMessage,
        warning: vscode.window.showWarningMessage,
        info: vscode.window.showInformationMessage,
      }[kind];
      return show(message, ...items);
    },
  };
}

/** The questions of an MCP server's form (agent/elicit): an input box, a quick pick. */
export function realFormApi(): FormApi {
  return {
    input: (title, prompt, value) =>
      vscode.window.showInputBox({ title, prompt, value, ignoreFocusOut: true }),
    pick: (title, placeHolder, items) =>
      vscode.window.showQuickPick(items, { title, placeHolder, ignoreFocusOut: true }),
  };
}
