#!/usr/bin/env bash
# Installs Debian's chromium for the console's browser tests when it is missing
# (playwright-core drives it; its own browser downloads cannot work here). Prints its path.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  echo "chromium: installing Debian's chromium package" >&2
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
command -v chromium
