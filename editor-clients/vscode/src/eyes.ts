// The editor's eyes for the agent (docs/protocol.md): the diagnostics, definitions, references
// and workspace symbols of VS Code's own language features, answered to agentls's requests
// agent/diagnostics, agent/definition, agent/references and agent/symbols.
import * as vscode from 'vscode';
import { DiagnosticsSettle } from './diagnosticsSettle';

/** What the extension advertises to the server, in capabilities.experimental.agentls. */
export const CAPABILITIES = { diagnostics: true, definition: true, references: true, symbols: true };

interface LspPosition {
  line: number;
  character: number;
}

interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

interface LspLocation {
  uri: string;
  range: LspRange;
}

function lspRange(range: vscode.Range): LspRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function lspLocation(location: vscode.Location | vscode.LocationLink): LspLocation {
  if ('targetUri' in location) {
    return {
      uri: location.targetUri.toString(),
      range: lspRange(location.targetSelectionRange ?? location.targetRange),
    };
  }
  return { uri: location.uri.toString(), range: lspRange(location.range) };
}

function lspDiagnostic(diagnostic: vscode.Diagnostic) {
  return {
    range: lspRange(diagnostic.range),
    // VS Code counts severities from 0 (Error), LSP from 1.
    severity: diagnostic.severity + 1,
    message: diagnostic.message,
    source: diagnostic.source,
  };
}

/** A document's diagnostics as one comparable value. */
function reportOf(uri: vscode.Uri): string {
  return JSON.stringify(vscode.languages.getDiagnostics(uri).map(lspDiagnostic));
}

/** The diagnostics of documents changed, and whether they have caught up with the change. */
export class Eyes implements vscode.Disposable {
  private readonly settle = new DiagnosticsSettle();
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.contentChanges.length > 0) {
          const uri = event.document.uri;
          this.settle.changed(uri.toString(), reportOf(uri));
        }
      }),
      vscode.languages.onDidChangeDiagnostics((event) => {
        for (const uri of event.uris) {
          this.settle.reported(uri.toString(), reportOf(uri));
        }
      }),
    ];
  }

  /** agent/diagnostics {uris, settleMs}: those documents' diagnostics (none named: every
   * one's), once they caught up with the latest change or after settleMs (the server's
   * figure, so every client waits alike). */
  async diagnostics(params: { uris?: string[]; settleMs?: number }) {
    const uris = params.uris ?? [];
    await this.settle.settled(uris, params.settleMs ?? 0);
    // A document VS Code has not opened and has no diagnostics for is left out: what its
    // problems were cannot be told.
    const open = new Set(vscode.workspace.textDocuments.map((document) => document.uri.toString()));
    const entries: [vscode.Uri, readonly vscode.Diagnostic[]][] =
      uris.length > 0
        ? uris
            .map((uri): [vscode.Uri, readonly vscode.Diagnostic[]] => {
              const parsed = vscode.Uri.parse(uri);
              return [parsed, vscode.languages.getDiagnostics(parsed)];
            })
            .filter(([uri, diagnostics]) => open.has(uri.toString()) || diagnostics.length > 0)
        : vscode.languages.getDiagnostics();
    return {
      items: entries.map(([uri, diagnostics]) => ({
        uri: uri.toString(),
        diagnostics: diagnostics.map(lspDiagnostic),
      })),
    };
  }

  /** agent/definition and agent/references {textDocument, position}: {locations}. */
  async locations(command: string, params: { textDocument: { uri: string }; position: LspPosition }) {
    const uri = vscode.Uri.parse(params.textDocument.uri);
    // The providers answer only for a document VS Code has loaded.
    await vscode.workspace.openTextDocument(uri);
    const position = new vscode.Position(params.position.line, params.position.character);
    const found = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>(
      command,
      uri,
      position,
    );
    return { locations: (found ?? []).map(lspLocation) };
  }

  /** agent/symbols {query}: {symbols}. */
  async symbols(params: { query: string }) {
    const found = await vscode.commands.executeCommand<vscode.SymbolInformation[]>(
      'vscode.executeWorkspaceSymbolProvider',
      params.query,
    );
    return {
      symbols: (found ?? []).map((symbol) => ({
        name: symbol.name,
        // VS Code counts symbol kinds from 0 (File), LSP from 1.
        kind: symbol.kind + 1,
        location: lspLocation(symbol.location),
      })),
    };
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }
}
