#!/usr/bin/env bash
# Releases agent-ci: the images, the npm package and the moving major tag, together, from the checked-out
# commit (.github/workflows/release.yml runs it; CONTRIBUTING.md, "Releasing"):
#
#   scripts/release.sh --registry REGISTRY [--tag vX.Y.Z] [--dry-run]
#
# 1. The tag (default: v + package.json's version) must name package.json's version.
# 2. dist/ is rebuilt and must equal what is committed: the Action runs the committed dist/.
# 3. The images are published to REGISTRY (scripts/publish-images.sh) and their digests recorded in
#    images.json; a changed record is committed, so the package and the tag carry the digests.
# 4. The package is published to npm with provenance.
# 5. The major tag (v1 for 1.x) is moved to this commit and pushed.
#
# --dry-run changes nothing anyone else sees: the images go to REGISTRY (give a local one, 127.0.0.1:PORT)
# with their record in a temporary file, `npm publish --dry-run` lists what would be published, and the
# commit and the tag moves are printed, not made.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'release: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
usage="usage: scripts/release.sh --registry REGISTRY [--tag vX.Y.Z] [--dry-run]"

registry="" tag="" dry_run=false
while [ $# -gt 0 ]; do
  case "$1" in
    --registry) [ $# -ge 2 ] || die "$usage"; registry=$2; shift 2 ;;
    --tag) [ $# -ge 2 ] || die "$usage"; tag=$2; shift 2 ;;
    --dry-run) dry_run=true; shift ;;
    *) die "$usage" ;;
  esac
done
[ -n "$registry" ] || die "$usage"

# Prints a command in dry-run mode, runs it otherwise.
act() {
  if $dry_run; then say "would run: $*"; else "$@"; fi
}

version=$(node -p 'require("./package.json").version')
[ -n "$tag" ] || tag="v$version"
[ "$tag" = "v$version" ] || die "the tag $tag does not name package.json's version $version"
major_tag="v${version%%.*}"
say "releasing $tag ($(git rev-parse --short HEAD))$($dry_run && echo ', dry run')"

say "building dist/"
npm run build --silent >/dev/null
if [ -n "$(git status --porcelain -- dist)" ]; then
  git status --short -- dist >&2
  die "dist/ differs from the commit: commit the rebuilt dist/ first (the Action runs the committed one)"
fi

if $dry_run; then
  record=$(mktemp -d)/images.json
else
  record=images.json
fi
bash scripts/publish-images.sh "$registry" --out "$record"
recorded=false
if ! $dry_run && [ -n "$(git status --porcelain -- images.json)" ]; then
  git add images.json
  git -c user.name="github-actions[bot]" -c user.email="41898282+github-actions[bot]@users.noreply.github.com" \
    commit -q -m "Record the images published for $tag"
  say "committed images.json: $(git rev-parse --short HEAD)"
  recorded=true
fi

if $dry_run; then
  npm publish --dry-run --ignore-scripts
else
  npm publish --provenance --access public --ignore-scripts
fi

head=$(git rev-parse HEAD)
say "moving $major_tag to $head (was $(git rev-parse -q --verify "refs/tags/$major_tag" || echo none))"
act git tag -f "$major_tag" "$head"
act git push --force origin "refs/tags/$major_tag"
if $recorded; then
  # The record's commit also goes to the branch the release was made from (a fast-forward, never forced).
  git push origin "HEAD:refs/heads/${RELEASE_BRANCH:?RELEASE_BRANCH names the branch to push the record to}"
fi
say "done"
