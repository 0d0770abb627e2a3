#!/usr/bin/env bash
# Makes sure a Docker-compatible engine answers and that the sandbox's base image exists.
#
# - An engine that already answers (DOCKER_HOST or the default socket) is used as it is: nothing on the
#   system is changed.
# - Otherwise, where allowed (root with apt-get, and CI=true or AGENT_CI_INSTALL_ENGINE=1), Debian's
#   docker.io is installed and dockerd started in the background; else it stops and says what to install.
# - The base image (AGENT_CI_BASE_IMAGE, default debian:bookworm-slim) is pulled when a registry answers,
#   or built locally with debootstrap + docker import when none does.
# Idempotent: a second run with everything in place takes well under a second.
set -euo pipefail

BASE_IMAGE="${AGENT_CI_BASE_IMAGE:-debian:bookworm-slim}"
SUITE="${AGENT_CI_BASE_SUITE:-bookworm}"
MIRROR="${AGENT_CI_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
LOG_DIR="${AGENT_CI_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/agent-ci}"

say() { printf 'ensure-engine: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

engine_answers() { command -v docker >/dev/null 2>&1 && timeout 10 docker info >/dev/null 2>&1; }

may_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
    && { [ "${CI:-}" = true ] || [ "${AGENT_CI_INSTALL_ENGINE:-}" = 1 ]; }
}

apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

start_engine() {
  if ! command -v dockerd >/dev/null 2>&1; then
    say "installing Debian's docker.io"
    apt_install docker.io iptables
  fi
  mkdir -p "$LOG_DIR"
  if ! pgrep -x dockerd >/dev/null 2>&1; then
    say "starting dockerd (log: $LOG_DIR/dockerd.log)"
    nohup dockerd >"$LOG_DIR/dockerd.log" 2>&1 &
  fi
  for _ in $(seq 1 60); do
    engine_answers && return 0
    sleep 0.5
  done
  tail -n 20 "$LOG_DIR/dockerd.log" >&2 || true
  die "dockerd did not answer within 30 s; see $LOG_DIR/dockerd.log"
}

build_base_image() {
  command -v debootstrap >/dev/null 2>&1 || {
    may_install || die "no registry answers and debootstrap is missing: install it (apt-get install debootstrap) or docker load an image tagged $BASE_IMAGE"
    apt_install debootstrap
  }
  local root
  root=$(mktemp -d /tmp/agent-ci-rootfs.XXXXXX)
  trap 'rm -rf "$root"' RETURN
  say "building $BASE_IMAGE locally with debootstrap ($SUITE, minbase); this takes about a minute"
  debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >"$LOG_DIR/debootstrap.log" 2>&1 \
    || { tail -n 20 "$LOG_DIR/debootstrap.log" >&2; die "debootstrap failed; see $LOG_DIR/debootstrap.log"; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | docker import --change 'CMD ["bash"]' - "$BASE_IMAGE" >/dev/null
  say "imported $BASE_IMAGE"
}

if ! engine_answers; then
  if may_install; then
    start_engine
  else
    die "no Docker engine answers (DOCKER_HOST=${DOCKER_HOST:-unset}). Start one (e.g. 'sudo systemctl start docker'), point DOCKER_HOST at a Docker-compatible socket (Podman: 'podman system service'), or re-run as root with AGENT_CI_INSTALL_ENGINE=1 to install Debian's docker.io."
  fi
fi

mkdir -p "$LOG_DIR"
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  if timeout 60 docker pull -q "$BASE_IMAGE" >/dev/null 2>&1; then
    say "pulled $BASE_IMAGE"
  else
    build_base_image
  fi
fi
