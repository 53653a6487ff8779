"""One language server's life: started through the launcher as the user's own program,
initialized within its `startupTimeout`, a file synced with its full text, and at the end
`shutdown` and `exit`, then its process group killed after its `shutdownTimeout` (the
shell's group registry, which checks the group is still ours and outlives a SIGKILL)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from pathlib import Path
from typing import Any

from ..extensions.mcp_config import expand, variables
from ..extensions.programs import Programs
from ..shell import launch
from ..shell.process_groups import GROUPS
from .connection import Connection, Published, Refused, ServerGone
from .definitions import ServerDefinition

_CAPABILITIES = {
    "textDocument": {
        "synchronization": {"dynamicRegistration": False},
        "publishDiagnostics": {"versionSupport": True},
        "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False},
        "definition": {"linkSupport": True},
        "references": {},
    },
    "workspace": {"configuration": True, "workspaceFolders": True},
}


class LanguageServer:
    """A started, initialized server; `start` raises ServerGone or OSError."""

    def __init__(self, definition: ServerDefinition, process: Any, connection: Connection):
        self.definition = definition
        self._process = process
        self._connection = connection
        self._versions: dict[str, int] = {}
        self._sent: dict[str, bytes] = {}
        self._sending = asyncio.Lock()
        """What each file's last text sent hashes to: a request about it needs no new sync."""
        self._ready_by = time.monotonic() + definition.startup_timeout
        self._answered = False
        # Its output may stay open after it exits (a child holds it): its exit ends it too.
        self._watch = asyncio.ensure_future(self._exited())
        self.capabilities: dict[str, Any] = {}
        """What the server said it serves, in its answer to `initialize`."""
        self._result_ids: dict[str, str] = {}
        """Each file's last pulled report's id, for the server to answer `unchanged`."""

    async def _exited(self) -> None:
        # Polled: asyncio's `wait()` returns only once the pipes close too.
        while self._process.returncode is None:
            await asyncio.sleep(0.1)
        await self._connection.end(f"it exited with code {self._process.returncode}")

    @classmethod
    async def start(
        cls, definition: ServerDefinition, root: Path, programs: Programs
    ) -> LanguageServer:
        env = variables(definition.project)  # `${VAR}` as in mcpServers and .mcp.json
        argv = [expand(definition.command, env), *(expand(a, env) for a in definition.args)]
        own = {name: expand(value, env) for name, value in definition.env.items()}
        # Confined as the repository's own programs are, whoever configured the server: it
        # reads the repository's configuration, and some servers run what that names
        # (pyright a venv's python, typescript-language-server the workspace's tsserver,
        # rust-analyzer build scripts); a repository's own `.lsp.json` server above all.
        # RuntimeError where no sandbox can be had.
        program = programs.projects(argv, own)
        process = await launch.start(
            program,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 20,
        )
        # Killed with the bash groups if agentls ends first, by SIGKILL too (the guardian).
        GROUPS.add(process.pid)
        assert process.stdin is not None and process.stdout is not None
        connection = Connection(process.stdout, process.stdin, definition.settings)
        server = cls(definition, process, connection)
        try:
            await asyncio.wait_for(server._initialize(root), definition.startup_timeout)
        except BaseException as error:  # a cancel too: no server is left behind
            await server.stop()
            if isinstance(error, TimeoutError):
                seconds = f"{definition.startup_timeout:g}"
                raise ServerGone(f"it did not initialize within {seconds} s") from None
            raise
        return server

    async def _initialize(self, root: Path) -> None:
        folder = {"uri": root.as_uri(), "name": root.name}
        params = {
            # None, not agentls's pid: the server runs in a pid namespace of its own (the
            # sandbox), where that pid names no process or another, and servers built on
            # vscode-languageserver (pyright, typescript-language-server) exit within 3 s
            # of finding it gone. Ending it is agentls's part (`stop`, the group killed).
            "processId": None,
            "clientInfo": {"name": "agentls"},
            "rootUri": folder["uri"],
            "workspaceFolders": [folder],
            "capabilities": _CAPABILITIES,
            "initializationOptions": self.definition.initialization_options,
        }
        answer = await self._connection.request("initialize", params)
        served = answer.get("capabilities") if isinstance(answer, dict) else None
        self.capabilities = served if isinstance(served, dict) else {}
        await self._connection.notify("initialized", {})
        if self.definition.settings is not None:
            settings = {"settings": self.definition.settings}
            await self._connection.notify("workspace/didChangeConfiguration", settings)

    @property
    def gone(self) -> str | None:
        return self._connection.gone

    def known(self, path: Path) -> list[Any] | None:
        """The diagnostics last pushed for `path`, None before any."""
        found = self._connection.published.get(path.as_uri())
        return None if found is None else found.diagnostics

    async def sync(self, path: Path, language: str, text: str, wait: float) -> Published:
        """Send `text` as `path`'s whole content and await its diagnostics of that version,
        at most `wait` seconds, or until its `startupTimeout` has passed for its first ones
        (TimeoutError); raises ServerGone."""
        uri = path.as_uri()
        before = self._connection.published.get(uri)
        count = before.count if before else 0
        version = await self._send(uri, language, text, again=True)
        if self.capabilities.get("diagnosticProvider"):
            waiting = self._pulled(uri, version)
        else:
            waiting = self._connection.published_after(uri, count, version)
        if not self._answered:
            # A server's first diagnostics are part of its start: pyright reads the
            # standard library's stubs and the workspace's imports first (2-8 s on two busy
            # cores), which a task's first edit would otherwise never see.
            wait = max(wait, self._ready_by - time.monotonic())
        published = await asyncio.wait_for(waiting, wait)
        self._answered = True
        return published

    async def _pulled(self, uri: str, version: int) -> Published:
        """The file's diagnostics of `version`, asked for (LSP 3.17's pull diagnostics): a
        full report's items, or the last ones when it says they are unchanged. A request
        the server cancels (busy, or the text changed under it) is asked again."""
        params: dict[str, Any] = {"textDocument": {"uri": uri}}
        while True:
            if (last := self._result_ids.get(uri)) is not None:
                params["previousResultId"] = last
            try:
                report = await self._connection.request("textDocument/diagnostic", params)
                break
            except Refused:
                await asyncio.sleep(0.1)  # bounded by the edit's wait (`sync`)
        kind = report.get("kind") if isinstance(report, dict) else None
        if kind == "unchanged" and uri in self._connection.published:
            items = self._connection.published[uri].diagnostics
        elif kind == "full" and isinstance(report.get("items"), list):
            items = report["items"]
        else:
            raise ServerGone("it answered textDocument/diagnostic with no report")
        result_id = report.get("resultId")
        if isinstance(result_id, str):
            self._result_ids[uri] = result_id
        else:
            self._result_ids.pop(uri, None)
        return await self._connection.record(uri, items, version)

    async def ask(self, method: str, path: Path, language: str, text: str, params: Any) -> Any:
        """The answer to `method` about `path` (a position's request: `params` join its
        `textDocument`), once the server has `text` as its content; raises ServerGone
        (Refused for an error answer)."""
        uri = path.as_uri()
        await self._send(uri, language, text, again=False)
        return await self._connection.request(method, {"textDocument": {"uri": uri}, **params})

    async def _send(self, uri: str, language: str, text: str, again: bool) -> int:
        """`text` as the file's next version (opened at the first), unless the server has it
        already and not `again`; the version it has. One at a time: a file opens once."""
        async with self._sending:
            version = self._versions.get(uri, 0)
            if not again and self._sent.get(uri) == _digest(text):
                return version
            version += 1
            if version == 1:
                document = {"uri": uri, "languageId": language, "version": 1, "text": text}
                await self._connection.notify("textDocument/didOpen", {"textDocument": document})
            else:
                changed = {"uri": uri, "version": version}
                params = {"textDocument": changed, "contentChanges": [{"text": text}]}
                await self._connection.notify("textDocument/didChange", params)
            self._versions[uri] = version
            self._sent[uri] = _digest(text)
            return version

    async def _shut_down(self) -> None:
        await self._connection.request("shutdown", None)
        await self._connection.notify("exit", None)
        while self._process.returncode is None:
            await asyncio.sleep(0.05)

    async def stop(self) -> None:
        """`shutdown` and `exit` within the server's `shutdownTimeout`, then its group killed
        (what it started too), whether it listened or not."""
        with contextlib.suppress(TimeoutError, ServerGone, OSError):
            await asyncio.wait_for(self._shut_down(), self.definition.shutdown_timeout)
        GROUPS.kill(self._process.pid)  # only while the group is still ours
        GROUPS.forget(self._process.pid)
        with contextlib.suppress(TimeoutError):  # reaped, once the pipes are closed
            await asyncio.wait_for(self._process.wait(), 1.0)
        self._watch.cancel()
        await self._connection.close()


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
