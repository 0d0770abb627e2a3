#!/usr/bin/env bash
# What the browser tests need besides npm: Debian's Chromium (driven by playwright-core) and the fonts the
# README's images are drawn with (Liberation for the sans-serif and monospace text, Noto Color Emoji for the
# report's ✅ and ❌). Installed where this machine may (root with apt-get); otherwise left to the tests,
# which say what is missing. Quiet when all is in place. Run by test.sh and images.sh.
set -euo pipefail

packages=()
[ -x /usr/bin/chromium ] || packages+=(chromium)
[ -d /usr/share/fonts/truetype/liberation2 ] || packages+=(fonts-liberation2)
[ -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || packages+=(fonts-noto-color-emoji)
if [ "${#packages[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "setup: installing Debian's ${packages[*]} for the browser tests" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
