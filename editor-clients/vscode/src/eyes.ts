// The editor's eyes for the agent (docs/protocol.md): the diagnostics, definitions, references
// and workspace symbols of VS Code's own language features, answered to agentls's requests
// agent/diagnostics, agent/definition, agent/references and agent/symbols.
import * as vscode from 'vscode';

/** How long a diagnostics answer waits for the language features to catch up (ms). */
export const SETTLE_MS = 2000;

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

/**
 * Which documents changed after their diagnostics last did: their language features have not
 * caught up with them yet.
 */
export class Eyes implements vscode.Disposable {
  private readonly pending = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.contentChanges.length > 0) {
          this.pending.add(event.document.uri.toString());
        }
      }),
      vscode.languages.onDidChangeDiagnostics((event) => {
        for (const uri of event.uris) {
          this.pending.delete(uri.toString());
        }
        for (const wake of [...this.waiters]) {
          wake();
        }
      }),
    ];
  }

  /** Resolves once none of `uris` is pending, or after SETTLE_MS. */
  private settled(uris: string[]): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (uris.every((uri) => !this.pending.has(uri))) {
          finish();
        }
      };
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(finish, SETTLE_MS);
      this.waiters.add(check);
      check();
    });
  }

  /** agent/diagnostics {uris}: those documents' diagnostics (none named: every one's). */
  async diagnostics(params: { uris?: string[] }) {
    const uris = params.uris ?? [];
    await this.settled(uris);
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
