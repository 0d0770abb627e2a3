#!/usr/bin/env bash
# Everything a fresh clone needs before agent-ci runs: the npm dependencies and the bundle in dist/, then the
# engine and base image. Idempotent and quiet when all is in place. Run by demo.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-deps.sh
bash scripts/ensure-engine.sh
