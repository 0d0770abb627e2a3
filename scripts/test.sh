#!/usr/bin/env bash
# The whole test suite: sets up what a fresh machine lacks (engine, base image, dependencies, the bundle,
# Chromium for the report's browser test), checks format and lint, then runs vitest and the Claude Code
# reference check. Exits non-zero when any of them failed.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-results
rm -f test-results/vitest-*.json
# What runs again under another OCI runtime (below): the tools, the path escapes, the network, the read-back,
# the command faults (the limits, held inside gVisor's kernel by rlimits).
RUNTIME_TESTS=(
  test/integration/tools-bash.test.ts test/integration/tools-edit.test.ts test/integration/tools-read.test.ts
  test/integration/tools-search.test.ts test/integration/tools-paths.test.ts test/adversarial/p-paths.test.ts
  test/integration/egress.test.ts test/integration/runtime.test.ts test/adversarial/c-commands.test.ts
)
status=0
full=""
[ $# -eq 0 ] && full=1
bash scripts/ensure-deps.sh
# Format and lint first, as they take seconds; a failure marks the suite failed but the tests still run,
# so one run shows every problem.
if [ -n "$full" ]; then
  npm run -s format:check || { echo "test: npm run format:check failed (npx prettier --write <files>)" >&2; status=1; }
  npm run -s lint || { echo "test: npm run lint failed" >&2; status=1; }
fi
# The unit tests first, with no engine in reach (DOCKER_HOST points nowhere): they must pass on a machine
# that has none (`npm run test:unit`). The rest need the engine and run after it is up.
if [ -n "$full" ]; then
  DOCKER_HOST=unix:///nonexistent/agent-ci-no-engine.sock npx vitest run --project unit \
    --reporter=default --reporter=json --outputFile.json=test-results/vitest-unit.json || status=$?
  set -- --project engine
fi
AGENT_CI_INSTALL_ENGINE="${AGENT_CI_INSTALL_ENGINE:-1}" bash scripts/setup.sh

# Other OCI runtimes named in AGENT_CI_RUNTIMES (default on a full run: runsc, gVisor), installed and
# registered with the engine where this machine may (ensure-engine.sh reloads dockerd's configuration; no
# container stops), before any test runs. One that cannot be set up fails the run with the reason.
runtimes="${AGENT_CI_RUNTIMES-${full:+runsc}}"
ready_runtimes=()
for runtime in ${runtimes//,/ }; do
  if AGENT_CI_RUNTIMES="$runtime" AGENT_CI_INSTALL_ENGINE="${AGENT_CI_INSTALL_ENGINE:-1}" bash scripts/ensure-engine.sh 2>"test-results/runtime-$runtime.log"; then
    ready_runtimes+=("$runtime")
  else
    echo "test: the $runtime runtime could not be set up: $(tail -n 3 "test-results/runtime-$runtime.log" | tr '\n' ' ')" >&2
    status=1
  fi
done

# The any-image tests' image of another architecture: Debian's base for arm64 (pulled, or built with
# debootstrap), its programs run under qemu-user-static, which ensure-engine.sh registers with binfmt_misc
# where this machine may. One that cannot be made fails its test with the reason rather than being skipped.
read -r foreign_arch foreign_image < <(npx tsx -e 'import { FOREIGN_ARCHITECTURE, foreignImage } from "./test/support/fixture-images.ts"; console.log(FOREIGN_ARCHITECTURE, foreignImage())')
if ! AGENT_CI_BASE_ARCH="$foreign_arch" AGENT_CI_BASE_IMAGE="$foreign_image" AGENT_CI_INSTALL_ENGINE="${AGENT_CI_INSTALL_ENGINE:-1}" \
  bash scripts/ensure-engine.sh 2>test-results/foreign-image.log; then
  export AGENT_CI_FOREIGN_SETUP_ERROR="$foreign_image could not be made: $(tail -n 3 test-results/foreign-image.log | tr '\n' ' ')"
fi

bash scripts/browser-deps.sh

# The prebuilt images' round trip (test/integration/prebuilt-images.test.ts) publishes to a real registry on
# loopback: Debian's docker-registry, the Distribution project's registry.
if ! command -v docker-registry >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "test: installing Debian's docker-registry for the prebuilt images' test" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-registry >/dev/null
fi

# Other engines (test/engines/): Podman's Docker-compatible socket, and an sshd for the ssh:// test, where
# this machine may install them (root with apt-get). A Podman that cannot be set up fails its test with
# the reason (AGENT_CI_PODMAN_SETUP_ERROR) rather than being skipped.
case " $* " in *engines*) engines=1 ;; *) engines="$full" ;; esac
if [ -n "$engines" ] && [ -z "${AGENT_CI_PODMAN_SOCKET:-}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  if podman_host=$(AGENT_CI_PODMAN_RESTART=1 AGENT_CI_INSTALL_ENGINE="${AGENT_CI_INSTALL_ENGINE:-1}" bash scripts/podman-engine.sh 2>test-results/podman-engine.log); then
    export AGENT_CI_PODMAN_SOCKET="${podman_host#unix://}"
  else
    export AGENT_CI_PODMAN_SETUP_ERROR="scripts/podman-engine.sh failed: $(tail -n 3 test-results/podman-engine.log | tr '\n' ' ')"
  fi
  if [ ! -x /usr/sbin/sshd ]; then
    echo "test: installing Debian's openssh-server for the ssh:// engine test" >&2
    { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null; } || true
  fi
fi
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@" || status=$?

# The tool, path-escape and network tests again under each other OCI runtime registered above, the run's
# container started under it (AGENT_CI_RUNTIME).
for runtime in "${ready_runtimes[@]}"; do
  AGENT_CI_RUNTIME="$runtime" npx vitest run --project engine --reporter=default --reporter=json \
    --outputFile.json="test-results/vitest-$runtime.json" "${RUNTIME_TESTS[@]}" || status=$?
done
node scripts/reliability-report.mjs || status=1

if [ -n "$full" ]; then
  echo "test: Claude Code reference cases" >&2
  node scripts/check-reference.mjs --verbose || status=1
  node scripts/reference-fresh.mjs || status=1
fi

node -e '
const fs = require("fs");
const runs = ["test-results/vitest-unit.json", "test-results/vitest.json", ...fs.readdirSync("test-results").filter((f) => /^vitest-(?!unit)[\w.-]+\.json$/.test(f)).map((f) => `test-results/${f}`)].filter(fs.existsSync).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
const sum = (key) => runs.reduce((n, r) => n + r[key], 0);
console.log(`tests: ${sum("numPassedTests")} passed, ${sum("numFailedTests")} failed`);
' || status=1
exit $status
