#!/usr/bin/env bash
# Gathers the toolbelt under $1 (/opt/agent-ci): each program with every shared library it loads and
# the dynamic loader, rewritten so that they load only from $1/lib whatever the image around them holds:
# the interpreter is $1/lib's loader, and DT_RPATH (not RUNPATH: RPATH wins over the image's
# LD_LIBRARY_PATH) is $1/lib on the programs and on the libraries (for their own dependencies).
set -euo pipefail
T=$1
mkdir -p "$T/bin" "$T/lib"

declare -A LIBS=()
LOADER=""

add_libs() { # every library ldd resolves for an ELF file, loader included
  local line lib
  while read -r line; do
    case "$line" in
      *"=> not found"*) echo "collect: $1 needs a missing library: $line" >&2; exit 1 ;;
      *"=> /"*) lib=${line#*=> }; lib=${lib%% (*}; LIBS[$lib]=1 ;;
      /*) lib=${line%% (*}; LOADER=$lib ;;
    esac
  done < <(ldd "$1" 2>/dev/null || true)
}

is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

programs=()
add_program() { # source path, destination path
  cp -L "$1" "$2"
  chmod 0755 "$2"
  if is_elf "$2"; then add_libs "$1"; programs+=("$2"); fi
}

# Programs agent-ci and its tools run; the Bash tool finds them last on PATH, after the image's own.
for p in node rg bash tar git zstd \
         cat chmod cp cut date dirname basename echo env false head id kill ln ls mkdir mktemp mv \
         nproc printf pwd readlink realpath rm rmdir seq sleep sort stat tail tee timeout touch tr true \
         uname wc xargs find unshare diff; do
  src=$(type -P "$p" || true)
  [ -n "$src" ] || { [ "$p" = diff ] && continue; echo "collect: $p not found" >&2; exit 1; }
  add_program "$src" "$T/bin/$p"
done
ln -s bash "$T/bin/sh"

# git finds its helpers and templates at paths compiled into it (and into its helpers): rewritten in place
# to paths of the same length under $T, so agent-ci's git runs as itself (a wrapper script setting
# GIT_EXEC_PATH cost a bash start, ~5 ms, on every git command) and never touches an image's own git.
GIT_CORE=/usr/lib/git-core
GIT_TEMPLATES=share/git-core/templates # relative: git prefixes /usr
[ "$(git --exec-path)" = "$GIT_CORE" ] || { echo "collect: git's exec path is $(git --exec-path), not $GIT_CORE" >&2; exit 1; }
TGIT_CORE="$T/git"
TGIT_TEMPLATES="$T/share/tmpl"
[ ${#TGIT_CORE} -eq ${#GIT_CORE} ] && [ ${#TGIT_TEMPLATES} -eq ${#GIT_TEMPLATES} ] ||
  { echo "collect: $TGIT_CORE and $TGIT_TEMPLATES must be as long as $GIT_CORE and $GIT_TEMPLATES" >&2; exit 1; }
mkdir -p "$TGIT_CORE"
git_elves=("$T/bin/git")
# Git's network and server programs are left out: agent-ci's own git works on the copied workspace only
# (status, diff, add, the baseline's commit), and these carry libcurl, GnuTLS, Kerberos and LDAP with them
# (~35 MB of the toolbelt). An image whose scripts need git over the network brings its own git, which
# the Bash tool finds first.
never_run=" git-remote-http git-remote-https git-remote-ftp git-remote-ftps git-http-fetch git-http-push git-http-backend git-imap-send git-daemon git-shell git-instaweb git-web--browse scalar "
for f in "$GIT_CORE"/*; do
  name=$(basename "$f")
  [ -f "$f" ] || continue
  case "$never_run" in *" $name "*) continue ;; esac
  # Builtins are copies of git itself (run by their name): one binary, linked.
  if cmp -s "$f" "$(type -P git)"; then ln -s ../bin/git "$TGIT_CORE/$name"; continue; fi
  if is_elf "$f"; then add_program "$f" "$TGIT_CORE/$name"; git_elves+=("$TGIT_CORE/$name"); else
    sed '1s|^#! */bin/sh|#!/opt/agent-ci/bin/sh|' "$f" > "$TGIT_CORE/$name"; chmod 0755 "$TGIT_CORE/$name"; fi
done
mkdir -p "$T/share"
cp -r "/usr/$GIT_TEMPLATES" "$TGIT_TEMPLATES"
for f in "${git_elves[@]}"; do
  LC_ALL=C perl -0777 -pi -e "s#\Q$GIT_CORE\E#$TGIT_CORE#g; s#\Q$GIT_TEMPLATES\E\0#$TGIT_TEMPLATES\0#g" "$f"
done

for lib in "${!LIBS[@]}"; do
  cp -L "$lib" "$T/lib/$(basename "$lib")"
  chmod 0755 "$T/lib/$(basename "$lib")"
done
cp -L "$LOADER" "$T/lib/$(basename "$LOADER")"
INTERP="$T/lib/$(basename "$LOADER")"

for lib in "$T"/lib/*; do
  [ "$lib" = "$INTERP" ] && continue
  patchelf --force-rpath --set-rpath "$T/lib" "$lib"
done
for prog in "${programs[@]}"; do
  patchelf --set-interpreter "$INTERP" --force-rpath --set-rpath "$T/lib" "$prog"
done

# Proof, in an empty environment (the official Node.js carries its builtins inside the binary).
env -i LD_LIBRARY_PATH=/nonexistent "$T/bin/node" -e 'require("fs"); process.exit(0)'
env -i "$T/bin/rg" --version >/dev/null
env -i "$T/bin/git" --version >/dev/null
[ "$(env -i "$T/bin/git" --exec-path)" = "$TGIT_CORE" ] || { echo "collect: the rewritten git does not use $TGIT_CORE" >&2; exit 1; }
env -i "$T/bin/git" init -q /tmp/collect-proof && [ -f /tmp/collect-proof/.git/description ] ||
  { echo "collect: the rewritten git does not find its templates in $TGIT_TEMPLATES" >&2; exit 1; }
env -i "$T/bin/bash" -c 'true'
du -sh "$T" >&2
