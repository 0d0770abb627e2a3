#!/usr/bin/env bash
# The npm dependencies and the bundle in dist/: what agent-ci needs besides an engine. Idempotent and quiet
# when all is in place.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
if [ ! -f dist/cli.js ] || [ -n "$(find src scripts/build.mjs scripts/bundles.mjs -newer dist/cli.js -print -quit 2>/dev/null)" ]; then
  echo "setup: building dist/" >&2
  npm run --silent build >&2
fi
