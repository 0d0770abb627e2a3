#!/usr/bin/env bash
# Publishes agent-ci's own images to a registry and records their digests, so a fresh engine pulls them by
# digest instead of building them (src/sandbox/image/prebuilt.ts):
#
#   scripts/publish-images.sh REGISTRY [--out FILE]
#
# REGISTRY is a host with an optional path (ghcr.io/owner, 127.0.0.1:5000). For each image (the default
# sandbox image, REGISTRY/agent-ci-sandbox; the toolbelt, REGISTRY/agent-ci-toolbelt) it builds the recipe
# the package holds (or finds it built) for each platform of AGENT_CI_PUBLISH_PLATFORMS (comma-separated
# architectures, default the engine's own; another one is built under emulation and needs qemu-user-static
# registered, see scripts/ensure-engine.sh), pushes each under a tag of its recipe's hash and architecture,
# joins several into one multi-platform index, and writes the manifest digest with the recipe's content hash
# to FILE (default: the package's images.json, which the CLI and the Action read). Log in first
# (`docker login`); a registry on 127.0.0.1 or localhost is spoken to over plain HTTP.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'publish-images: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[ $# -ge 1 ] || die "usage: scripts/publish-images.sh REGISTRY [--out FILE]"
REGISTRY=${1%/}
OUT=images.json
if [ $# -ge 2 ]; then
  [ "$2" = --out ] && [ $# -eq 3 ] || die "usage: scripts/publish-images.sh REGISTRY [--out FILE]"
  OUT=$3
fi
PLATFORMS=${AGENT_CI_PUBLISH_PLATFORMS:-$(docker version --format '{{.Server.Arch}}')}
insecure=()
case "$REGISTRY" in 127.0.0.1[:/]* | 127.0.0.1 | localhost[:/]* | localhost) insecure=(--insecure) ;; esac

tsx() { npx --no-install tsx scripts/publish-images.ts "$@"; }

# The digest the registry gave a pushed reference.
pushed_digest() {
  docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$1" \
    | grep -F "$2@" | head -n 1 | cut -d@ -f2
}

# The record is written whole, once every image is pushed: a failed publication leaves the old one.
tmp="$OUT.partial"
rm -f "$tmp"
trap 'rm -f "$tmp"' EXIT

while read -r label repository short _hash; do
  name="$REGISTRY/$repository"
  refs=()
  for arch in ${PLATFORMS//,/ }; do
    say "$label for linux/$arch"
    local_tag=$(tsx build "$label" "$arch")
    remote="$name:$short-$arch"
    docker tag "$local_tag" "$remote"
    docker push -q "$remote" >/dev/null
    digest=$(pushed_digest "$remote" "$name")
    # The registry's name for it is dropped again: the image keeps its recipe's tag, and an engine that
    # publishes often (the bench, the tests) does not collect one name per registry it ever pushed to.
    docker rmi "$remote" >/dev/null
    [ -n "$digest" ] || die "the registry gave $remote no digest"
    refs+=("$name@$digest")
  done
  if [ ${#refs[@]} -eq 1 ]; then
    digest=${refs[0]#*@}
  else
    # One index for the platforms, pushed under the recipe's hash; its digest is what a run pulls.
    docker manifest rm "$name:$short" >/dev/null 2>&1 || true
    docker manifest create "${insecure[@]}" "$name:$short" "${refs[@]}" >/dev/null
    digest=$(docker manifest push "${insecure[@]}" --purge "$name:$short" | grep -o 'sha256:[0-9a-f]\{64\}' | tail -n 1)
    [ -n "$digest" ] || die "pushing the index $name:$short gave no digest"
  fi
  tsx record "$tmp" "$REGISTRY" "$label" "$digest" "$PLATFORMS"
  say "$name@$digest"
done < <(tsx recipes)

mv "$tmp" "$OUT"
trap - EXIT
say "recorded in $OUT"
