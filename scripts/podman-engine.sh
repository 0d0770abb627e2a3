#!/usr/bin/env bash
# Serves Podman's Docker-compatible API on a socket, for running agent-ci (and test/engines/podman.test.ts)
# against Podman instead of Docker. Prints the DOCKER_HOST to use on stdout; everything else goes to stderr.
#
# - Podman and catatonit (the init Podman runs for `Init: true`) are installed from Debian where allowed:
#   root with apt-get, and CI=true or AGENT_CI_INSTALL_ENGINE=1 (as in ensure-engine.sh). Else it stops and
#   says what to install.
# - `podman system service --time=0` is started in the background on the socket unless one answers there
#   already (AGENT_CI_PODMAN_SOCKET, default /run/podman/podman.sock as root, else
#   $XDG_RUNTIME_DIR/podman/podman.sock).
# - The sandbox image and its base image are copied from Docker (`docker save | podman load`) when Docker
#   has them and Podman does not: no registry needs to answer.
# - AGENT_CI_PODMAN_SECCOMP=strict serves Podman with the Docker-like seccomp profile that
#   scripts/podman-seccomp.mjs derives from Podman's own (no user namespaces, no mount family). With
#   Podman's default profile (AGENT_CI_PODMAN_SECCOMP unset or "engine"), agent-ci refuses to run unless
#   --allow-weak-hardening is given: docs/ENGINES.md says why.
# Idempotent: a second run with everything in place takes about a second. A service this script started
# in the other seccomp mode is restarted, and so is any it started when AGENT_CI_PODMAN_RESTART=1 (the test
# suite asks for a fresh one: a Podman 4.3 service that has served several suites here began failing
# container starts with HTTP 500 "exit status 1" or "write child: broken pipe"; a fresh one did not).
#
#   export DOCKER_HOST=$(bash scripts/podman-engine.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

BASE_IMAGE="${AGENT_CI_BASE_IMAGE:-debian:bookworm-slim}"
SECCOMP="${AGENT_CI_PODMAN_SECCOMP:-engine}"
LOG_DIR="${AGENT_CI_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/agent-ci}"
if [ "$(id -u)" = 0 ]; then
  SOCKET="${AGENT_CI_PODMAN_SOCKET:-/run/podman/podman.sock}"
else
  SOCKET="${AGENT_CI_PODMAN_SOCKET:-${XDG_RUNTIME_DIR:-/tmp}/podman/podman.sock}"
fi

say() { printf 'podman-engine: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

may_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
    && { [ "${CI:-}" = true ] || [ "${AGENT_CI_INSTALL_ENGINE:-}" = 1 ]; }
}

answers() { command -v curl >/dev/null 2>&1 && [ "$(curl -s -m 5 --unix-socket "$SOCKET" http://d/_ping 2>/dev/null)" = OK ]; }

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v catatonit >/dev/null 2>&1 || [ -x /usr/libexec/podman/catatonit ] || missing+=(catatonit)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  may_install || die "missing: ${missing[*]}. Install them (apt-get install podman catatonit curl), or re-run as root with AGENT_CI_INSTALL_ENGINE=1."
  say "installing Debian's ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

case "$SECCOMP" in engine | strict) ;; *) die "AGENT_CI_PODMAN_SECCOMP must be engine or strict, not $SECCOMP" ;; esac
mkdir -p "$LOG_DIR" "$(dirname "$SOCKET")"
# What this script started on this socket before: "pid mode".
STATE="$LOG_DIR/podman-service.$(printf '%s' "$SOCKET" | tr '/' '_')"
if answers && [ -f "$STATE" ]; then
  read -r old_pid old_mode <"$STATE" || true
  if { [ "${old_mode:-}" != "$SECCOMP" ] || [ "${AGENT_CI_PODMAN_RESTART:-}" = 1 ]; } && kill -0 "${old_pid:-0}" 2>/dev/null; then
    say "restarting the service (pid $old_pid) with seccomp mode $SECCOMP (was ${old_mode:-}; restart asked: ${AGENT_CI_PODMAN_RESTART:-0})"
    kill "$old_pid"
    for _ in $(seq 1 20); do answers || break; sleep 0.25; done
  fi
elif answers && [ "$SECCOMP" = strict ]; then
  say "warning: a service this script did not start answers on $SOCKET; its seccomp profile is left as it is"
fi
if ! answers; then
  rm -f "$SOCKET"
  conf=()
  if [ "$SECCOMP" = strict ]; then
    node scripts/podman-seccomp.mjs >"$LOG_DIR/podman-seccomp.json"
    printf '[containers]\nseccomp_profile = "%s"\n' "$LOG_DIR/podman-seccomp.json" >"$LOG_DIR/podman-containers.conf"
    conf=(env "CONTAINERS_CONF=$LOG_DIR/podman-containers.conf")
  fi
  say "starting podman system service on $SOCKET, seccomp mode $SECCOMP (log: $STATE.log)"
  nohup "${conf[@]}" podman system service --time=0 "unix://$SOCKET" >"$STATE.log" 2>&1 &
  echo "$! $SECCOMP" >"$STATE"
  for _ in $(seq 1 60); do
    answers && break
    sleep 0.5
  done
  answers || { tail -n 20 "$STATE.log" >&2 || true; die "podman system service did not answer on $SOCKET within 30 s; see $STATE.log"; }
fi

# The default sandbox image's tag, as src/sandbox/image/image.ts computes it: a hash of Dockerfile.sandbox and the
# base image's name.
TAG="agent-ci-sandbox:$({ cat Dockerfile.sandbox; printf '\0%s' "$BASE_IMAGE"; } | sha256sum | cut -c1-12)"
docker_has() { command -v docker >/dev/null 2>&1 && timeout 10 docker image inspect "$1" >/dev/null 2>&1; }
for image in "$TAG" "$BASE_IMAGE"; do
  podman image exists "$image" 2>/dev/null && continue
  if docker_has "$image"; then
    say "copying $image from Docker into Podman"
    docker save "$image" | podman load -q >/dev/null
  else
    say "warning: $image is in neither engine; agent-ci will try to build or pull it through Podman (needs a registry)"
  fi
done

echo "unix://$SOCKET"
