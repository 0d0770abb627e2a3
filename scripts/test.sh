#!/usr/bin/env bash
# The whole test suite: sets up what a fresh machine lacks (engine, base image, dependencies, the bundle,
# Chromium for the report's browser test), then runs vitest and the Claude Code reference check.
set -euo pipefail
cd "$(dirname "$0")/.."
AGENT_CI_INSTALL_ENGINE="${AGENT_CI_INSTALL_ENGINE:-1}" bash scripts/setup.sh

if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "test: installing Debian's chromium for the report's browser test" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

mkdir -p test-results
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@" || status=$?

if [ -d ../shared/reference/claude-code ] && [ $# -eq 0 ]; then
  echo "test: Claude Code reference cases" >&2
  node ../shared/tools/check-reference.mjs --verbose || status=1
fi

node -e '
const r = JSON.parse(require("fs").readFileSync("test-results/vitest.json", "utf8"));
console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
' || status=1
exit $status
