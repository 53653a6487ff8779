"""The client under test for the MCP conformance suite: a real `agentls run` with the suite's
server configured as an HTTP MCP server, against the tests' fake model API.

The suite runs `python client.py URL` with `MCP_CONFORMANCE_SCENARIO` (and, for some auth
scenarios, `MCP_CONFORMANCE_CONTEXT`: the credentials a user would put in the server's
`"oauth"` entry). The fake model calls each of the server's tools once, arguments made from
its schema, then answers. `BROWSER` is `browser.py`, which follows the authorization URL as a
user's browser would (the suite's authorization server signs in at once).

Every scenario runs `agentls run -p --yes`, but the elicitation one: nobody answers under `-p`
(it declines), so there a person is played at the terminal, pressing Enter at each field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/: the fake model API

from fake_api import FakeAnthropic, reply, text, tool_use  # noqa: E402

SERVER = "conformance"


def _value(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    return {"number": 2, "integer": 3, "boolean": True, "array": [], "object": {}}.get(
        str(kind), "agentls"
    )


def _model(body: dict[str, Any]) -> Any:
    """Calls the next tool of the server it was not yet seen calling, then says done."""
    called = {
        block["name"]
        for message in body["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    }
    for tool in body.get("tools", []):
        name = tool["name"]
        if name.startswith(f"mcp__{SERVER}__") and name not in called:
            properties = tool["input_schema"].get("properties", {})
            return reply(tool_use(name, {k: _value(v) for k, v in properties.items()}))
    return reply(text("done"))


def _oauth(context: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The `"oauth"` entry a user would write with the scenario's credentials."""
    oauth: dict[str, Any] = {}
    if "client_id" in context:
        oauth["clientId"] = context["client_id"]
    if "client_secret" in context:
        oauth["clientSecret"] = context["client_secret"]
    if "private_key_pem" in context:
        key = folder / "client-key.pem"
        key.write_text(context["private_key_pem"])
        oauth |= {"grant": "client_credentials", "privateKeyFile": str(key)}
    elif context.get("name", "").startswith("auth/client-credentials"):
        oauth["grant"] = "client_credentials"
    if "idp_id_token" in context:
        token = folder / "id-token"
        token.write_text(context["idp_id_token"])
        oauth |= {
            "grant": "cross_app_access",
            "idpTokenEndpoint": context["idp_token_endpoint"],
            "idpClientId": context["idp_client_id"],
            "idpIssuer": context["idp_issuer"],
            "idTokenFile": str(token),
        }
    if context.get("name") == "auth/basic-cimd" or "cimd" in context.get("name", ""):
        oauth["clientMetadataUrl"] = "https://conformance-test.local/client-metadata.json"
    return oauth


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory(prefix="agentls-conformance-") as temporary:
        folder = Path(temporary)
        workspace = folder / "workspace"
        settings_folder = folder / "config" / "agentls"
        for made in (workspace, settings_folder):
            made.mkdir(parents=True)
        server: dict[str, Any] = {"type": "http", "url": url}
        oauth = _oauth({"name": scenario, **context}, folder)
        if oauth:
            server["oauth"] = oauth
        settings = {
            "mcpServers": {SERVER: server},
            "mcpStartupTimeout": 20,
            "mcpAuthTimeout": 20,
            "mcpCallTimeout": 20,
            "toolSearchThreshold": 1000000,
        }
        (settings_folder / "settings.json").write_text(json.dumps(settings))
        env = {
            **os.environ,
            "XDG_CONFIG_HOME": str(folder / "config"),
            "XDG_STATE_HOME": str(folder / "state"),
            "ANTHROPIC_API_KEY": "conformance-test-key",
            "BROWSER": f"{sys.executable} {HERE / 'browser.py'} %s",
            "NO_COLOR": "1",
        }
        task = "Call each tool of the conformance MCP server once."
        person = scenario.startswith("elicitation")
        command = [sys.executable, "-m", "agentls", "run", "--yes"]
        command += [task] if person else ["-p", task]
        with FakeAnthropic() as fake:
            fake.script(*([_model] * 20))
            env["ANTHROPIC_BASE_URL"] = fake.url
            done = subprocess.run(
                command,
                cwd=workspace,
                env=env,
                input="\n" * 40 if person else "",
                text=True,
                capture_output=True,
                timeout=90,
            )
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        return done.returncode


if __name__ == "__main__":
    sys.exit(main())
