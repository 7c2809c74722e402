#!/usr/bin/env bash
# Installs Debian's prometheus package (the server and promtool) when it is missing, for the
# alert-rule unit tests and the live dashboard-query test. Prints the directory holding both.
# The package's own service is never started: the tests run their own server on loopback.
# .ci/run calls it in a step of its own; scripts/pretest.sh before every `npm test`.
set -euo pipefail
installed() { command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; }
if ! installed; then
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  # One install at a time: two test runs may start together, and a second one must neither
  # race the first's policy-rc.d nor give up on dpkg's lock. It waits, then finds it installed.
  lock_dir=${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service
  mkdir -p "$lock_dir"
  exec 9>"$lock_dir/prometheus-install.lock"
  flock -w 900 9 || { echo "prometheus: another install still holds $lock_dir/prometheus-install.lock after 900 s" >&2; exit 1; }
  if ! installed; then
    echo "prometheus: installing Debian's prometheus package" >&2
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    # policy-rc.d 101 keeps the package's postinst from starting a system-wide server. Ours
    # only: removed on any exit (a failed install included), one found here is left alone.
    policy=/usr/sbin/policy-rc.d
    if [ ! -e "$policy" ]; then
      trap '$sudo rm -f "$policy"' EXIT
      printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
      $sudo chmod +x "$policy"
    fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends prometheus >/dev/null
    installed || { echo "prometheus: the package installed, but prometheus or promtool is not on PATH" >&2; exit 1; }
  fi
fi
dirname "$(command -v promtool)"
