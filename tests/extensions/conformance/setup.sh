#!/usr/bin/env bash
# Installs what the mcp_conformance tier needs, idempotently, in a cache folder outside the
# repository ($AGENTLS_MCP_CONFORMANCE_CACHE, else ~/.cache/agentls-mcp-conformance): the
# official MCP conformance suite and a Node 22 to run it (the suite needs `fs.globSync`,
# Node 22 or newer; Debian's is 20), both from npm. Prints the folder.
set -euo pipefail
cache="${AGENTLS_MCP_CONFORMANCE_CACHE:-$HOME/.cache/agentls-mcp-conformance}"
suite_version=0.1.16
mkdir -p "$cache"
installed="$cache/node_modules/@modelcontextprotocol/conformance/package.json"
if [[ ! -x "$cache/node_modules/.bin/node" ]] || ! grep -q "\"version\": \"$suite_version\"" "$installed" 2>/dev/null; then
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
    node@22 "@modelcontextprotocol/conformance@$suite_version" >&2
fi
echo "$cache"
