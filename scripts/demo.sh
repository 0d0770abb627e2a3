#!/usr/bin/env bash
# The main job on the built-in example, with no API key and no network: a scripted agent finds the bug in
# examples/buggy-calc with Grep, reads the file, fixes it with Edit, runs the tests with Bash, and stops.
# The sandbox image is built on the first run (a few minutes); later runs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
AGENT_CI_INSTALL_ENGINE="${AGENT_CI_INSTALL_ENGINE:-1}" bash scripts/setup.sh

exec node bin/agent-ci.js run \
  --workspace examples/buggy-calc \
  --script examples/buggy-calc/fix.script.json \
  --mode acceptEdits \
  --allow 'Bash(npm test)' --allow 'Bash(npm test:*)' \
  --verify 'npm test' \
  "$@"
