"""Tier mcp_conformance: the official MCP conformance suite's client scenarios
(`@modelcontextprotocol/conformance`, pinned), each driving a real `agentls run` as the client
under test (`conformance/client.py`). `conformance/setup.sh` installs the suite and Node 22
from npm; `.ci/run` runs it first.

Every scenario passes but one, whose server is wrong: 0.1.16's
`auth/2025-03-26-oauth-metadata-backcompat` serves authorization-server metadata whose issuer
(`…/oauth`) is not the URL it was fetched for, which RFC 8414 §3.3 says to reject. agentls
refuses it, and the test requires the refusal to name the mismatch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.mcp_conformance

HERE = Path(__file__).parent / "conformance"
CACHE = Path(
    os.environ.get("AGENTLS_MCP_CONFORMANCE_CACHE")
    or Path.home() / ".cache" / "agentls-mcp-conformance"
)
BIN = CACHE / "node_modules" / ".bin"
SCENARIOS = (
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
)
WRONG_SERVER = {
    "auth/2025-03-26-oauth-metadata-backcompat": "Authorization server metadata issuer mismatch"
}
"""Scenarios whose server the client must refuse, and the words the refusal must say."""


def _suite() -> Path:
    suite = BIN / "conformance"
    if not suite.exists():
        if os.environ.get("AGENTLS_MCP_CONFORMANCE") == "required":
            pytest.fail(f"no conformance suite in {CACHE}: run {HERE / 'setup.sh'}")
        pytest.skip(f"no conformance suite in {CACHE}: run {HERE / 'setup.sh'}")
    return suite


def _env() -> dict[str, str]:
    # The suite's `#!/usr/bin/env node` finds Node 22 first.
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def test_the_pinned_suite_has_these_client_scenarios() -> None:
    listed = subprocess.run(
        [str(_suite()), "list", "--client"], env=_env(), capture_output=True, text=True
    )
    names = [line.split()[1] for line in listed.stdout.splitlines() if line.startswith("  - ")]
    assert tuple(names) == SCENARIOS


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_scenario_passes(scenario: str, tmp_path: Path) -> None:
    command = f"{sys.executable} {HERE / 'client.py'}"
    ran = subprocess.run(
        [
            str(_suite()),
            "client",
            "--command",
            command,
            "--scenario",
            scenario,
            "-o",
            str(tmp_path),
            "--timeout",
            "120000",
        ],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    (checks_file,) = tmp_path.rglob("checks.json")
    checks = json.loads(checks_file.read_text())
    client_err = (checks_file.parent / "stderr.txt").read_text()
    failed = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    if scenario in WRONG_SERVER:
        assert WRONG_SERVER[scenario] in client_err, client_err
        return
    summary = "\n".join(f"{c['id']}: {c['status']} {c['description']}" for c in failed)
    assert not failed and ran.returncode == 0, f"{summary}\n{ran.stderr[-3000:]}\n{client_err}"
