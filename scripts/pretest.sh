#!/usr/bin/env bash
# Runs before `npm test`: prepares the model (fast when up to date) and, unless the tests
# are pointed at servers of your own (TEST_DATABASE_URL / TEST_REDIS_URL), starts the
# private PostgreSQL and Redis on loopback that they use by default.
set -euo pipefail
cd "$(dirname "$0")/.."
# A Node.js older than package.json's engines.node (no pinned one from `npm ci` on this
# platform) is refused here with one line, not halfway through the suite.
node --import tsx src/supported-node.ts
npm run --silent model:prepare
# the console's browser tests (test/console/browser.test.ts) drive Debian's chromium
scripts/chromium.sh >/dev/null || echo "pretest: could not install chromium; the browser tests will say so" >&2
# the alert-rule, dashboard-query and k6 remote-write tests run Debian's prometheus and promtool
scripts/prometheus.sh >/dev/null || echo "pretest: could not install prometheus; the monitoring tests will say so" >&2
# The client packages (SDK and recog-client): the tests import and run them as built.
npm run --silent build --workspaces
if [ -z "${TEST_DATABASE_URL:-}" ] || [ -z "${TEST_REDIS_URL:-}" ]; then
  scripts/services.sh start >/dev/null
fi
