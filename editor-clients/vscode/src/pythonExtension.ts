// The interpreter the Python extension (ms-python.python) picks, to make agentls's own
// environment from. A folder's settings can point the Python extension at a program inside
// the folder, and a cloned repository must never choose a program agentls runs: the pick is
// taken only in a trusted workspace, and never when it lies inside a workspace folder.
import * as path from 'path';
import * as vscode from 'vscode';
import { insideAny } from './launch';

interface PythonApi {
  environments?: { getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } };
}

/** The Python extension's interpreter as a one-item list, or none. */
export async function pythonExtensionInterpreter(): Promise<string[]> {
  const extension = vscode.extensions.getExtension<PythonApi>('ms-python.python');
  if (!extension || !vscode.workspace.isTrusted) {
    return [];
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const picked = api.environments?.getActiveEnvironmentPath()?.path;
    const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
    if (!picked || !path.isAbsolute(picked) || insideAny(picked, folders)) {
      return [];
    }
    return [picked];
  } catch {
    return []; // an older Python extension without this API
  }
}
