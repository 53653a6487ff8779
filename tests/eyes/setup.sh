#!/usr/bin/env bash
# Installs what the pyright tier needs, idempotently, in a cache folder outside the
# repository ($AGENTLS_PYRIGHT_CACHE, else ~/.cache/agentls-pyright): pyright from npm
# (pinned), whose `node_modules/.bin/pyright-langserver` the tests start with the system's
# Node. About 15 s the first time; later runs reuse it. Prints the folder.
set -euo pipefail
cache="${AGENTLS_PYRIGHT_CACHE:-$HOME/.cache/agentls-pyright}"
pyright_version=1.1.414
mkdir -p "$cache"
installed="$cache/node_modules/pyright/package.json"
if [[ ! -x "$cache/node_modules/.bin/pyright-langserver" ]] || ! grep -q "\"version\": \"$pyright_version\"" "$installed" 2>/dev/null; then
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "pyright@$pyright_version" >&2
fi
echo "$cache"
