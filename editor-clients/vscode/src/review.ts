// The review of the agent's edits: the extension's own workspace/applyEdit handler. Each
// file opens as a diff (current text | proposal) with Accept / Reject CodeLenses on every
// hunk and Accept / Reject Whole Edit in the editor title. Only the accepted hunks are
// applied, then saved, and only then does the server get its answer, so its next bash step
// sees them and what it tells the model is what landed.
import * as vscode from 'vscode';
import type {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  WorkspaceEdit as LspWorkspaceEdit,
} from 'vscode-languageclient';
import {
  applyHunks,
  type Decision,
  type Hunk,
  HunkDecisions,
  hunksOf,
  positionAt,
  type TextEdit,
  UnsupportedEdit,
} from './hunks';

export const REVIEW_SCHEME = 'agentls-proposal';

interface FileChange {
  uri: vscode.Uri;
  version: number | null;
  edits: TextEdit[];
  create: boolean;
}

/** The one file an LSP edit changes (docs/protocol.md: one file per edit). The client
 * advertises documentChanges, so the server never sends the `changes` form. */
function fileChange(edit: LspWorkspaceEdit): FileChange {
  let only: { uri: string; change: FileChange } | undefined;
  const changeFor = (uri: string): FileChange => {
    if (only && only.uri !== uri) {
      throw new UnsupportedEdit('an edit of more than one file cannot be reviewed here');
    }
    only ??= { uri, change: { uri: vscode.Uri.parse(uri), version: null, edits: [], create: false } };
    return only.change;
  };
  for (const operation of edit.documentChanges ?? []) {
    if ('kind' in operation) {
      if (operation.kind !== 'create') {
        throw new UnsupportedEdit(`a ${operation.kind} of a file cannot be reviewed here`);
      }
      changeFor(operation.uri).create = true;
    } else {
      const change = changeFor(operation.textDocument.uri);
      change.version = operation.textDocument.version;
      for (const textEdit of operation.edits) {
        if (!('newText' in textEdit)) {
          throw new UnsupportedEdit('a snippet edit cannot be reviewed here');
        }
        change.edits.push(textEdit);
      }
    }
  }
  if (!only) {
    throw new UnsupportedEdit('an edit that changes no file cannot be reviewed here');
  }
  return only.change;
}

/** The file an edit that only deletes one file deletes (a reviewed background task's
 * deletion, undo's), else undefined. */
function onlyDeletion(edit: LspWorkspaceEdit): vscode.Uri | undefined {
  const operations = edit.documentChanges ?? [];
  const [only] = operations;
  if (operations.length === 1 && 'kind' in only && only.kind === 'delete') {
    return vscode.Uri.parse(only.uri);
  }
  return undefined;
}

/** A deletion is put to the user as a question: there is no diff to review. */
async function confirmDeletion(uri: vscode.Uri, label: string | undefined): Promise<ApplyWorkspaceEditResult> {
  const name = vscode.workspace.asRelativePath(uri);
  const answer = await vscode.window.showWarningMessage(
    `${label ?? 'Agent'}: delete ${name}?`,
    { modal: true },
    'Delete',
  );
  if (answer !== 'Delete') {
    return { applied: false };
  }
  const edit = new vscode.WorkspaceEdit();
  edit.deleteFile(uri, { ignoreIfNotExists: true });
  return { applied: await vscode.workspace.applyEdit(edit) };
}

function openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === uri.toString());
}

/** The file's text as the editor has it (unsaved changes included), else as on disk. */
async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  const open = openDocument(uri);
  if (open) {
    return open.getText();
  }
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}

/** What the chat view is told of a review that starts. */
export interface PendingReview {
  key: string;
  uri: vscode.Uri;
  hunks: number;
}

class FileReview {
  readonly decisions: HunkDecisions;
  title = '';
  readonly original: vscode.Uri;
  readonly proposal: vscode.Uri;
  readonly finished: Promise<void>;
  private finish!: () => void;

  constructor(
    readonly change: FileChange,
    readonly text: string,
    readonly hunks: Hunk[],
    id: number,
  ) {
    this.decisions = new HunkDecisions(hunks.length);
    const side = (name: string) =>
      vscode.Uri.from({ scheme: REVIEW_SCHEME, path: change.uri.path, query: `${id}-${name}` });
    this.original = side('current');
    this.proposal = side('proposed');
    this.finished = new Promise((resolve) => (this.finish = resolve));
    if (hunks.length === 0) {
      this.finish();
    }
  }

  proposedText(): string {
    return applyHunks(this.text, this.decisions.shown(this.hunks));
  }

  /** The line of `proposed` (this.proposedText()) where hunk `index` starts, or would. */
  proposedLine(index: number, proposed: string): number {
    let shift = 0;
    this.hunks.slice(0, index).forEach((hunk, i) => {
      if (this.decisions.all[i] !== 'rejected') {
        shift += hunk.newText.length - (hunk.end - hunk.start);
      }
    });
    return positionAt(proposed, this.hunks[index].start + shift).line;
  }

  decide(index: number | 'all', decision: Decision): void {
    if (index === 'all') {
      this.decisions.decideAll(decision);
    } else {
      this.decisions.decide(index, decision);
    }
    if (this.decisions.finished) {
      this.finish();
    }
  }

  close(): void {
    this.decisions.rejectPending();
    this.finish();
  }
}

export class Reviewer implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider {
  private readonly reviews = new Map<string, FileReview>();
  private nextId = 1;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  private readonly reviewStarted = new vscode.EventEmitter<PendingReview>();
  readonly onDidChange = this.changed.event;
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  /** An edit is waiting for the user's review (its diff is opening). */
  readonly onDidStartReview = this.reviewStarted.event;

  register(): vscode.Disposable {
    const decide = (decision: Decision) => (key: string, index: number) =>
      this.decide(this.reviews.get(key), index, decision);
    const decideAll = (decision: Decision) => (uri?: vscode.Uri) =>
      this.decide(this.reviewOf(uri), 'all', decision);
    return vscode.Disposable.from(
      vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this),
      vscode.languages.registerCodeLensProvider({ scheme: REVIEW_SCHEME }, this),
      vscode.commands.registerCommand('agentls.review.acceptHunk', decide('accepted')),
      vscode.commands.registerCommand('agentls.review.rejectHunk', decide('rejected')),
      vscode.commands.registerCommand('agentls.review.undoHunk', decide('pending')),
      vscode.commands.registerCommand('agentls.review.acceptAll', decideAll('accepted')),
      vscode.commands.registerCommand('agentls.review.rejectAll', decideAll('rejected')),
      vscode.commands.registerCommand('agentls.review.show', (key?: string) => this.showAgain(key)),
      vscode.window.tabGroups.onDidChangeTabs((event) => {
        for (const tab of event.closed) {
          const input = tab.input;
          if (input instanceof vscode.TabInputTextDiff) {
            this.reviews.get(input.modified.toString())?.close();
          }
        }
      }),
      this.changed,
      this.lensesChanged,
      this.reviewStarted,
    );
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const review = [...this.reviews.values()].find(
      (r) => r.original.toString() === uri.toString() || r.proposal.toString() === uri.toString(),
    );
    if (!review) {
      return '';
    }
    return uri.toString() === review.proposal.toString() ? review.proposedText() : review.text;
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const review = this.reviews.get(document.uri.toString());
    if (!review) {
      return [];
    }
    const key = review.proposal.toString();
    const proposed = review.proposedText();
    return review.hunks.flatMap((hunk, i) => {
      const line = review.proposedLine(i, proposed);
      const at = new vscode.Range(line, 0, line, 0);
      const lens = (title: string, command: string) =>
        new vscode.CodeLens(at, { title, command, arguments: [key, i] });
      const which = hunk.label;
      const decision = review.decisions.all[i];
      if (decision === 'pending') {
        return [
          lens(`$(check) Accept ${which}`, 'agentls.review.acceptHunk'),
          lens('$(close) Reject', 'agentls.review.rejectHunk'),
        ];
      }
      return [lens(`${decision === 'accepted' ? 'Accepted' : 'Rejected'} ${which} · Undo`, 'agentls.review.undoHunk')];
    });
  }

  /** The workspace/applyEdit handler. */
  async review(
    params: ApplyWorkspaceEditParams,
    token: vscode.CancellationToken,
  ): Promise<ApplyWorkspaceEditResult> {
    const deletion = onlyDeletion(params.edit);
    if (deletion) {
      return confirmDeletion(deletion, params.label);
    }
    let review: FileReview;
    try {
      review = await this.prepare(fileChange(params.edit), params.edit.changeAnnotations);
    } catch (error) {
      if (error instanceof UnsupportedEdit) {
        return { applied: false, failureReason: error.message };
      }
      throw error;
    }
    if (!token.isCancellationRequested) {
      await this.show(review, params.label, token);
    }
    if (token.isCancellationRequested) {
      return { applied: false, failureReason: 'the review was withdrawn' };
    }
    if (review.hunks.length === 0) {
      return { applied: true }; // the edit changes nothing
    }
    if (review.decisions.accepted(review.hunks).length === 0) {
      return { applied: false }; // the user's no: the server words it
    }
    return this.land(review);
  }

  private async prepare(
    change: FileChange,
    annotations: Record<string, { label: string }> | undefined,
  ): Promise<FileReview> {
    const open = openDocument(change.uri);
    if (open && change.version !== null && open.version !== change.version) {
      throw new UnsupportedEdit(`${change.uri.fsPath} changed after the edit was proposed`);
    }
    const existing = await currentText(change.uri);
    if (existing === undefined && !change.create) {
      throw new UnsupportedEdit(`${change.uri.fsPath} does not exist`);
    }
    const text = existing ?? '';
    let hunks = hunksOf(text, change.edits, annotations);
    if (existing === undefined && hunks.length === 0) {
      // An empty new file (an __init__.py) still needs the user's yes to be created.
      hunks = [{ start: 0, end: 0, newText: '', label: 'an empty new file' }];
    }
    return new FileReview(change, text, hunks, this.nextId++);
  }

  private async show(review: FileReview, label: string | undefined, token: vscode.CancellationToken) {
    if (review.hunks.length === 0) {
      return;
    }
    const key = review.proposal.toString();
    this.reviews.set(key, review);
    await vscode.commands.executeCommand('setContext', 'agentls.reviewing', true);
    const count = review.hunks.length === 1 ? '1 hunk' : `${review.hunks.length} hunks`;
    review.title = `Review ${label ?? vscode.workspace.asRelativePath(review.change.uri)} (${count})`;
    const withdrawn = token.onCancellationRequested(() => review.close());
    try {
      this.reviewStarted.fire({ key, uri: review.change.uri, hunks: review.hunks.length });
      await this.openDiff(review);
      await review.finished;
    } finally {
      withdrawn.dispose();
      this.reviews.delete(key);
      await this.closeTabs(review);
      await vscode.commands.executeCommand('setContext', 'agentls.reviewing', this.reviews.size > 0);
    }
  }

  private async openDiff(review: FileReview): Promise<void> {
    await vscode.commands.executeCommand('vscode.diff', review.original, review.proposal, review.title, {
      preview: false,
    });
  }

  /** The diff of a pending review brought back to the front: `key`'s, else the latest. */
  private async showAgain(key: string | undefined): Promise<void> {
    const review = (key && this.reviews.get(key)) || [...this.reviews.values()].pop();
    if (!review) {
      void vscode.window.showInformationMessage('No agent edit is waiting for review.');
      return;
    }
    await this.openDiff(review);
  }

  private async closeTabs(review: FileReview): Promise<void> {
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter(
        (tab) =>
          tab.input instanceof vscode.TabInputTextDiff &&
          tab.input.modified.toString() === review.proposal.toString(),
      );
    await vscode.window.tabGroups.close(tabs);
  }

  /** Applies the accepted hunks and saves them; the answer says whether that happened. */
  private async land(review: FileReview): Promise<ApplyWorkspaceEditResult> {
    const edit = new vscode.WorkspaceEdit();
    if ((await currentText(review.change.uri)) !== review.text && !review.change.create) {
      return { applied: false, failureReason: `${review.change.uri.fsPath} changed during the review` };
    }
    if (review.change.create) {
      edit.createFile(review.change.uri, { ignoreIfExists: true });
    }
    for (const hunk of review.decisions.accepted(review.hunks)) {
      const start = positionAt(review.text, hunk.start);
      const end = positionAt(review.text, hunk.end);
      const range = new vscode.Range(start.line, start.character, end.line, end.character);
      edit.replace(review.change.uri, range, hunk.newText);
    }
    if (!(await vscode.workspace.applyEdit(edit))) {
      return { applied: false, failureReason: 'VS Code could not apply the accepted hunks' };
    }
    const document = await vscode.workspace.openTextDocument(review.change.uri);
    await document.save();
    return { applied: true };
  }

  private reviewOf(uri: vscode.Uri | undefined): FileReview | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    const wanted = uri ?? active;
    const found = wanted && this.reviews.get(wanted.toString());
    return found || [...this.reviews.values()].pop();
  }

  private decide(review: FileReview | undefined, index: number | 'all', decision: Decision): void {
    if (!review) {
      void vscode.window.showInformationMessage('No agent edit is under review.');
      return;
    }
    review.decide(index, decision);
    this.changed.fire(review.proposal);
    this.lensesChanged.fire();
  }
}
