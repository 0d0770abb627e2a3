#!/usr/bin/env bash
# Makes sure a Docker-compatible engine answers and that the sandbox's base image exists.
#
# - An engine that already answers (DOCKER_HOST or the default socket) is used as it is: nothing on the
#   system is changed.
# - Otherwise, where allowed (root with apt-get, and CI=true or AGENT_CI_INSTALL_ENGINE=1), Debian's
#   docker.io (and pigz, which dockerd decompresses image layers with) is installed and dockerd started in
#   the background; else it stops and says what to install.
# - The base image (AGENT_CI_BASE_IMAGE, default debian:bookworm-slim) is pulled when a registry answers,
#   or built locally with debootstrap + docker import when none does.
# - AGENT_CI_BASE_ARCH=arm64 (with AGENT_CI_BASE_IMAGE=arm64v8/debian:bookworm-slim, the name agent-ci looks
#   for) makes a base for another architecture than the engine's, whose programs run under qemu-user-static:
#   emulation is registered with binfmt_misc first where allowed.
# Idempotent: a second run with everything in place takes well under a second and prints nothing.
# What it runs (apt-get, dockerd, debootstrap, a build) writes to a log in the state folder; the terminal gets
# a line when a step starts, naming its log, and one when it is done, with its duration; a failed step prints
# its log's last lines and the log's path.
# - AGENT_CI_RUNTIMES=runsc (a list, space or comma separated) makes sure the engine has gVisor's runsc
#   runtime: Debian's runsc is installed where allowed, registered under "runtimes" in the engine's
#   daemon.json (AGENT_CI_DOCKER_CONFIG, default /etc/docker/daemon.json; what else is there is kept), and
#   dockerd (its pid from AGENT_CI_DOCKERD_PIDFILE, default /var/run/docker.pid) told to reload its
#   configuration (SIGHUP): runtimes are reloaded live, so no container of a
#   running engine stops. Registered with --network=none (the way Debian's runsc starts a container on
#   Docker 20.10: on the default bridge it refuses, "cannot run with network enabled in root network
#   namespace") and --host-uds=open (so a run's container may connect to the Unix socket of the egress
#   sidecar's volume; it sees no socket that is not mounted into it).
# Idempotent: a second run with everything in place takes well under a second.
set -euo pipefail

BASE_IMAGE="${AGENT_CI_BASE_IMAGE:-debian:bookworm-slim}"
SUITE="${AGENT_CI_BASE_SUITE:-bookworm}"
MIRROR="${AGENT_CI_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ARCH="${AGENT_CI_BASE_ARCH:-}"
# A base for another architecture under the default name would replace the engine's own base.
[ -z "$ARCH" ] || [ -n "${AGENT_CI_BASE_IMAGE:-}" ] \
  || { printf 'ensure-engine: AGENT_CI_BASE_ARCH=%s needs AGENT_CI_BASE_IMAGE too (e.g. arm64v8/debian:bookworm-slim)\n' "$ARCH" >&2; exit 1; }
LOG_DIR="${AGENT_CI_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/agent-ci}"

say() { printf 'ensure-engine: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
# Seconds since $1 (a $SECONDS value), as agent-ci prints durations: 42 s, 3m 24s.
since() {
  local s=$((SECONDS - $1))
  if [ "$s" -lt 60 ]; then printf '%d s' "$s"; else printf '%dm %02ds' $((s / 60)) $((s % 60)); fi
}
# Runs a command with its output in $LOG_DIR/$1.log; on failure, that log's tail and its path, and stop.
logged() {
  local name=$1 log="$LOG_DIR/$1.log"
  shift
  mkdir -p "$LOG_DIR"
  "$@" >>"$log" 2>&1 || { tail -n 20 "$log" >&2; die "$name failed; the whole log: $log"; }
}

engine_answers() { command -v docker >/dev/null 2>&1 && timeout 10 docker info >/dev/null 2>&1; }

may_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
    && { [ "${CI:-}" = true ] || [ "${AGENT_CI_INSTALL_ENGINE:-}" = 1 ]; }
}

apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    logged apt env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  logged apt env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

start_engine() {
  local start=$SECONDS
  mkdir -p "$LOG_DIR"
  if ! command -v dockerd >/dev/null 2>&1; then
    say "engine: installing Debian's docker.io (log: $LOG_DIR/apt.log)"
    apt_install docker.io iptables
  fi
  # dockerd decompresses image layers with unpigz when one is on its PATH (looked up at each pull), else with
  # Go's gzip, which took twice as long for agent-ci's toolbelt here (docs/benchmarks.md, cold start).
  if ! command -v unpigz >/dev/null 2>&1 && may_install; then
    say "engine: installing Debian's pigz (dockerd decompresses layers with it)"
    apt_install pigz
  fi
  if ! pgrep -x dockerd >/dev/null 2>&1; then
    say "engine: starting dockerd (log: $LOG_DIR/dockerd.log)"
    nohup dockerd >"$LOG_DIR/dockerd.log" 2>&1 &
  fi
  for _ in $(seq 1 60); do
    engine_answers && { say "engine: dockerd answers after $(since "$start")"; return 0; }
    sleep 0.5
  done
  tail -n 20 "$LOG_DIR/dockerd.log" >&2 || true
  die "dockerd did not answer within 30 s; see $LOG_DIR/dockerd.log"
}

# qemu-user-static registered with binfmt_misc, with the F flag (the interpreter is opened when registered,
# so programs in containers find it too), for the programs of $ARCH.
ensure_emulation() {
  local qarch
  case "$ARCH" in arm64) qarch=aarch64 ;; amd64) qarch=x86_64 ;; 386) qarch=i386 ;; *) qarch=$ARCH ;; esac
  [ -e "/proc/sys/fs/binfmt_misc/qemu-$qarch" ] && return 0
  may_install || die "$ARCH programs need qemu-user-static registered with binfmt_misc (qemu-$qarch): install Debian's qemu-user-static, or re-run as root with AGENT_CI_INSTALL_ENGINE=1"
  [ -f "/usr/lib/binfmt.d/qemu-$qarch.conf" ] || apt_install qemu-user-static
  [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  [ -e "/proc/sys/fs/binfmt_misc/qemu-$qarch" ] || cat "/usr/lib/binfmt.d/qemu-$qarch.conf" > /proc/sys/fs/binfmt_misc/register
  say "registered qemu-$qarch with binfmt_misc"
}

DOCKER_CONFIG_FILE="${AGENT_CI_DOCKER_CONFIG:-/etc/docker/daemon.json}"
DOCKERD_PIDFILE="${AGENT_CI_DOCKERD_PIDFILE:-/var/run/docker.pid}"
# The runtimeArgs each runtime agent-ci knows how to install is registered with (see the header).
runtime_args() {
  case "$1" in
    runsc) printf '%s' '["--network=none","--host-uds=open"]' ;;
    *) die "AGENT_CI_RUNTIMES: agent-ci knows how to install runsc (gVisor), not $1; register it with the engine yourself" ;;
  esac
}

engine_has_runtime() { docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q "\"$1\""; }

ensure_runtime() {
  local name=$1 args path pid
  engine_has_runtime "$name" && return 0
  args=$(runtime_args "$name")
  if ! command -v "$name" >/dev/null 2>&1; then
    may_install || die "the engine has no $name runtime: install Debian's $name (apt-get install $name), or re-run as root with AGENT_CI_INSTALL_ENGINE=1"
    say "installing Debian's $name"
    apt_install "$name"
  fi
  path=$(command -v "$name")
  [ "$(id -u)" = 0 ] || die "registering $name in $DOCKER_CONFIG_FILE needs root"
  pid=$(cat "$DOCKERD_PIDFILE" 2>/dev/null || true)
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null \
    || die "registering $name needs dockerd's pid to reload it: no live process in $DOCKERD_PIDFILE (set AGENT_CI_DOCKERD_PIDFILE to its --pidfile)"
  mkdir -p "$(dirname "$DOCKER_CONFIG_FILE")"
  # Merged, not overwritten: the file may hold the machine's own settings.
  node -e '
    const fs = require("fs");
    const [file, name, path, args] = process.argv.slice(1);
    const config = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8") || "{}") : {};
    config.runtimes = { ...config.runtimes, [name]: { path, runtimeArgs: JSON.parse(args) } };
    fs.writeFileSync(file + ".tmp", JSON.stringify(config, null, 2) + "\n");
    fs.renameSync(file + ".tmp", file);
  ' "$DOCKER_CONFIG_FILE" "$name" "$path" "$args"
  kill -HUP "$pid"
  for _ in $(seq 1 40); do
    engine_has_runtime "$name" && { say "registered $name with the engine ($DOCKER_CONFIG_FILE, reloaded)"; return 0; }
    sleep 0.25
  done
  die "dockerd did not pick up the $name runtime from $DOCKER_CONFIG_FILE (does it read another file? set AGENT_CI_DOCKER_CONFIG)"
}

build_base_image() {
  command -v debootstrap >/dev/null 2>&1 || {
    may_install || die "no registry answers and debootstrap is missing: install it (apt-get install debootstrap) or docker load an image tagged $BASE_IMAGE"
    apt_install debootstrap
  }
  local start=$SECONDS
  # Global, not local: the EXIT trap runs after this function's scope is gone (a failed step ends the script
  # from inside it, and set -u would stop the trap at an unbound name).
  base_root=$(mktemp -d "${TMPDIR:-/tmp}/agent-ci-rootfs.XXXXXX")
  trap 'rm -rf "$base_root" "$base_root.context"' EXIT
  say "base image: building $BASE_IMAGE locally with debootstrap ($SUITE, minbase${ARCH:+, $ARCH under emulation}); a few minutes (log: $LOG_DIR/debootstrap.log)"
  : >"$LOG_DIR/debootstrap.log"
  logged debootstrap debootstrap --variant=minbase ${ARCH:+--arch="$ARCH"} "$SUITE" "$base_root" "$MIRROR"
  rm -rf "$base_root"/var/cache/apt/archives/*.deb "$base_root"/var/lib/apt/lists/*
  if [ -z "$ARCH" ]; then
    tar -C "$base_root" -c . | docker import --change 'CMD ["bash"]' - "$BASE_IMAGE" >/dev/null
  else
    # Docker 20.10 ignores `docker import --platform`; a build from scratch records the architecture.
    mkdir "$base_root.context"
    tar -C "$base_root" -cf "$base_root.context/rootfs.tar" .
    printf 'FROM scratch\nADD rootfs.tar /\nCMD ["bash"]\n' > "$base_root.context/Dockerfile"
    : >"$LOG_DIR/base-build.log"
    logged base-build env DOCKER_BUILDKIT=0 docker build -q --platform "linux/$ARCH" -t "$BASE_IMAGE" "$base_root.context"
  fi
  rm -rf "$base_root" "$base_root.context"
  trap - EXIT
  say "base image: built $BASE_IMAGE in $(since "$start")"
}

if ! engine_answers; then
  if may_install; then
    start_engine
  else
    die "no Docker engine answers (DOCKER_HOST=${DOCKER_HOST:-unset}). Start one (e.g. 'sudo systemctl start docker'), point DOCKER_HOST at a Docker-compatible socket (Podman: 'podman system service'), or re-run as root with AGENT_CI_INSTALL_ENGINE=1 to install Debian's docker.io."
  fi
fi

mkdir -p "$LOG_DIR"
[ -z "$ARCH" ] || ensure_emulation
RUNTIMES="${AGENT_CI_RUNTIMES:-}"
for runtime in ${RUNTIMES//,/ }; do ensure_runtime "$runtime"; done
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  pull_start=$SECONDS
  if timeout 60 docker pull -q ${ARCH:+--platform "linux/$ARCH"} "$BASE_IMAGE" >/dev/null 2>&1; then
    say "base image: pulled $BASE_IMAGE in $(since "$pull_start")"
  else
    build_base_image
  fi
fi
