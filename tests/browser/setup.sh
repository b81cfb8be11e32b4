#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests, once. CI starts it early, beside the Rust
# build; a test that finds no Chromium runs it too and so waits here for that install.
set -euo pipefail
command -v chromium >/dev/null && exit 0
exec 9>/tmp/toolgate-chromium-setup.lock
flock 9
command -v chromium >/dev/null && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "Chromium is missing: install Debian's package (sudo apt-get install chromium)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Another apt-get may hold the lock for a while (.ci/run installs its other packages first).
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium fonts-dejavu-core
