"""Where the model client's key and endpoint come from, and which secrets are redacted
(issue 9: findings 2, 3 and 4, and the secret names and short values)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from agentls import redaction
from agentls.config.environment import load
from agentls.redaction import REDACTED, redact
from agentls.tools import run_tool
from doubles import tool_context as context

PEM_BODY = ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "VJTUt9Us8cKjMzEfYyjiWA4R4")


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config folder, empty; no model variable in the environment."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "config" / "agentls"
    folder.mkdir(parents=True)
    return folder


def _workspace(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    (root / ".env").write_text(text)
    return root


def test_a_workspace_env_never_chooses_the_endpoint_of_the_users_key(
    tmp_path: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-user-from-shell")
    root = _workspace(
        tmp_path,
        "ANTHROPIC_BASE_URL=https://evil.example\nOPENAI_BASE_URL=https://evil.example\n"
        "AGENTLS_MODEL=evil-model\nAGENTLS_PROVIDER=openai\n",
    )
    client = load(root).client
    assert client["ANTHROPIC_API_KEY"] == "sk-user-from-shell"
    assert not {"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL"} & client.keys()
    assert "AGENTLS_PROVIDER" not in client


def test_the_users_config_file_beats_a_workspace_env(
    tmp_path: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (user / ".env").write_text("ANTHROPIC_API_KEY=sk-user-config\n")
    root = _workspace(
        tmp_path, "ANTHROPIC_API_KEY=sk-from-repo-1\nANTHROPIC_BASE_URL=https://evil.example\n"
    )
    loaded = load(root)
    assert loaded.client["ANTHROPIC_API_KEY"] == "sk-user-config"
    assert "ANTHROPIC_BASE_URL" not in loaded.client
    # The repository's key is not the user's, but it is redacted all the same.
    assert "sk-from-repo-1" in loaded.secrets


@pytest.mark.parametrize("service", ["ANTHROPIC", "OPENAI", "DEEPSEEK", "OPENROUTER"])
def test_a_key_goes_only_to_the_endpoint_of_its_own_source(
    tmp_path: Path, user: Path, monkeypatch: pytest.MonkeyPatch, service: str
) -> None:
    monkeypatch.setenv(f"{service}_API_KEY", "sk-in-the-shell")
    (user / ".env").write_text(f"{service}_BASE_URL=https://proxy.example\n")
    client = load(_workspace(tmp_path, "")).client
    assert client[f"{service}_API_KEY"] == "sk-in-the-shell"
    assert f"{service}_BASE_URL" not in client
    # Together in one source, they go together; the shell beats the file by name otherwise.
    (user / ".env").write_text(
        f"{service}_API_KEY=sk-in-the-file\n{service}_BASE_URL=https://proxy.example\n"
        "AGENTLS_MODEL=from-file\n"
    )
    monkeypatch.delenv(f"{service}_API_KEY")
    monkeypatch.setenv("AGENTLS_MODEL", "from-shell")
    client = load(_workspace(tmp_path, "")).client
    assert client[f"{service}_API_KEY"] == "sk-in-the-file"
    assert client[f"{service}_BASE_URL"] == "https://proxy.example"
    assert client["AGENTLS_MODEL"] == "from-shell"


async def test_shadowed_secrets_are_redacted_too(
    tmp_path: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-winner-in-the-shell")
    (user / ".env").write_text("ANTHROPIC_API_KEY=sk-loser-in-the-config\n")
    root = _workspace(tmp_path, "ANTHROPIC_API_KEY=sk-loser-in-the-workspace\nDEBUG=1\n")
    ctx = context(root)
    ctx.secrets = load(root).secrets
    shown, _ = await run_tool(ctx, "read_file", {"path": ".env"})
    assert shown == f"1\tANTHROPIC_API_KEY={REDACTED}\n2\tDEBUG=1"
    found, _ = await run_tool(ctx, "grep", {"pattern": "sk-"})
    assert "sk-loser" not in found
    printed, _ = await run_tool(ctx, "bash", {"command": f"cat .env {user}/.env"})
    assert "sk-loser" not in printed and printed.count(REDACTED) == 2


_FILE = (
    'PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\n'
    + "\\n".join(PEM_BODY)
    + '\\n-----END PRIVATE KEY-----"\n'
    "QUOTED_TOKEN='single$quoted-value'\n"
    'ESCAPED_SECRET="a\\"quote-inside-it"\n'
    'MULTI_PASSWORD="first-line-of-it\nsecond-line-of-it"\n'
    "export SPACED_API_KEY = sk-spaced-and-exported  # a comment\n"
    "DB_PASS=hunter2\n"
    "PLAIN_PWD=admin\n"
)


@pytest.mark.parametrize("line_end", ["\n", "\r\n"], ids=["lf", "crlf"])
async def test_values_are_redacted_as_written_in_the_file(
    tmp_path: Path, user: Path, line_end: str
) -> None:
    root = _workspace(tmp_path, "")
    (root / ".env").write_bytes(_FILE.replace("\n", line_end).encode())
    ctx = context(root)
    ctx.secrets = load(root).secrets
    leaks = [
        *PEM_BODY,
        "single$quoted-value",
        "quote-inside-it",
        "first-line-of-it",
        "second-line-of-it",
        "sk-spaced",
        "hunter2",
    ]
    for tool, arguments in [
        ("read_file", {"path": ".env"}),
        ("grep", {"pattern": "."}),
        ("bash", {"command": "cat .env"}),
    ]:
        text, _ = await run_tool(ctx, tool, arguments)
        assert not [leak for leak in leaks if leak in text], (tool, text)
    shown, _ = await run_tool(ctx, "read_file", {"path": ".env"})
    # The lines stay where they were, and a plain word of four letters stays readable.
    assert shown.splitlines()[-1] == "8\tPLAIN_PWD=admin"


def test_short_values_are_redacted_only_where_they_stand_alone() -> None:
    secrets = redaction.secret_values({"DB_PASS": "hunter2", "X_TOKEN": "ab1", "Y_PWD": "test"})
    assert secrets == ("hunter2",)
    text = "password hunter2, not hunter22 nor xhunter2; ab1 test"
    assert redact(text, secrets) == f"password {REDACTED}, not hunter22 nor xhunter2; ab1 test"


async def test_edit_file_is_no_oracle_for_a_secret(tmp_path: Path) -> None:
    """Found or not, the answer is the same whether a guess at a secret is right or wrong."""
    secret = "sk-ant-api03-Zq81"
    root = _workspace(tmp_path, f"ANTHROPIC_API_KEY={secret}\nDEBUG=0\n")
    ctx = context(root)
    ctx.secrets = (secret,)

    async def answer(guess: str, **arguments: object) -> str:
        text, error = await run_tool(
            ctx, "edit_file", {"path": ".env", "old_text": guess, "new_text": guess, **arguments}
        )
        assert error
        return text.replace(guess, "GUESS")

    for right, wrong in [
        (secret[:-1], "sk-ant-api03-Zq8X"),
        (f"KEY={secret}", "KEY=sk-ant-api03-Zq80"),
        ("Zq81", "Zq82"),
    ]:
        assert await answer(right) == await answer(wrong)
        assert await answer(right, replace_all=True) == await answer(wrong, replace_all=True)
    assert "not found" in await answer(secret)
    # A rewrite that equals the file, and one that does not, are refused alike.
    for content in (f"ANTHROPIC_API_KEY={secret}\nDEBUG=0\n", "ANTHROPIC_API_KEY=x\nDEBUG=0\n"):
        text, error = await run_tool(ctx, "write_file", {"path": ".env", "content": content})
        assert error and "holds a secret" in text
    assert ctx.workspace.proposals == []  # type: ignore[attr-defined]
    text, error = await run_tool(
        ctx, "edit_file", {"path": ".env", "old_text": "DEBUG=0", "new_text": "DEBUG=1"}
    )
    assert not error
    assert (root / ".env").read_text() == f"ANTHROPIC_API_KEY={secret}\nDEBUG=1\n"


async def test_a_secret_repeated_all_over_a_file_is_redacted_in_linear_time(
    tmp_path: Path,
) -> None:
    # Judged by how the time grows with the file, not by a wall-clock limit that a busy
    # machine misses: ten times the lines take about ten times as long, not a hundred.
    secret = "sk-ant-repeated-0123"
    root = _workspace(tmp_path, "")
    ctx = context(root)
    ctx.secrets = (secret, secret[:9])

    async def timed(lines: int) -> float:
        (root / "many.txt").write_text(f"{secret} {secret[:9]}\n" * lines)
        started = time.perf_counter()
        text, error = await run_tool(ctx, "read_file", {"path": "many.txt", "limit": 2})
        assert not error and text.startswith(f"1\t{REDACTED} {REDACTED}\n2\t")
        return time.perf_counter() - started

    await timed(1_000)  # warm: imports and caches are not the file's cost
    small = min([await timed(5_000) for _ in range(3)])
    large = min([await timed(50_000) for _ in range(2)])
    assert large < 30 * small, (small, large)


def test_a_fifo_named_env_does_not_hold_the_task_and_a_linked_env_counts(
    tmp_path: Path, user: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / ".env")
    started = time.monotonic()
    assert load(root).secrets == ()
    assert time.monotonic() - started < 2
    (root / ".env").unlink()
    (root / "real.env").write_text("SERVICE_TOKEN=tok-behind-a-link\n")
    (root / ".env").symlink_to("real.env")
    assert "tok-behind-a-link" in load(root).secrets
