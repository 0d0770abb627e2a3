#!/usr/bin/env bash
# Everything a fresh clone needs before agent-ci runs: the engine and base image, the npm dependencies,
# and the bundle in dist/. Idempotent and quiet when all is in place. Sourced by demo.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-engine.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
if [ ! -f dist/cli.js ] || [ -n "$(find src scripts/build.mjs -newer dist/cli.js -print -quit 2>/dev/null)" ]; then
  echo "setup: building dist/" >&2
  npm run --silent build >&2
fi
