#!/usr/bin/env bash
# Install Debian's chromium for the browser test. Never fails itself: where it cannot be installed
# (no root, no apt), tests/test_browser.py is skipped with a message that says so (a failure under CI's
# ESSENCE_REQUIRE_RESOURCES=1, see tests/ci_switch.py).
set -u
if command -v chromium >/dev/null 2>&1; then exit 0; fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
        echo "chromium: not installed and no root to install it; the browser test will be skipped" >&2; exit 0
    fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium: apt-get not available; the browser test will be skipped" >&2; exit 0
fi
echo "installing chromium (Debian package) for the browser test ..."
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -q chromium >/tmp/essence-chromium-install.log 2>&1 \
  || { $SUDO apt-get update -q >>/tmp/essence-chromium-install.log 2>&1 \
       && $SUDO apt-get install -y -q chromium >>/tmp/essence-chromium-install.log 2>&1; } \
  || echo "chromium: install failed (see /tmp/essence-chromium-install.log); the browser test will be skipped" >&2
exit 0
