#!/usr/bin/env bash
# Installs Arize Phoenix (an OpenTelemetry backend that takes OTLP and gives the spans back
# through its REST API) into a virtual environment, once. CI starts it early, beside the Rust
# build; a test that finds no Phoenix runs it too and so waits here for that install.
set -euo pipefail
venv="${1:-target/tmp/phoenix}"
version="${PHOENIX_VERSION:-arize-phoenix==20.26.1}"
marker="$venv/installed-$version"
[ -e "$marker" ] && exit 0
mkdir -p "$(dirname "$venv")"
exec 9>"$(dirname "$venv")/phoenix-setup.lock"
flock 9
[ -e "$marker" ] && exit 0
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$version"
touch "$marker"
