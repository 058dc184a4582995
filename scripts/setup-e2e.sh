#!/usr/bin/env bash
# Installs what the browser test (tests/serve_e2e.rs) needs, when missing: Debian's chromium
# (and chromium-driver), Node.js, and playwright-core from npm into tests/e2e/node_modules
# (locked by tests/e2e/package-lock.json; Playwright drives the system Chromium, it downloads
# no browser). Installing system packages needs root and apt-get. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        echo "setup-e2e: missing $*; install them (as root: apt-get install $*)" >&2
        exit 1
    fi
    echo "setup-e2e: apt-get install $*" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

if [ ! -d tests/e2e/node_modules/playwright-core ]; then
    echo "setup-e2e: npm ci in tests/e2e" >&2
    npm ci --prefix tests/e2e --no-audit --no-fund --loglevel=error
fi
