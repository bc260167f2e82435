#!/usr/bin/env bash
# Debian's Chromium for the site's browser test (tests/test_site.py); Playwright drives it, nothing
# downloads a browser. Skipped when it is already installed.
set -euo pipefail
if [ -x /usr/lib/chromium/chromium ] || [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != 0 ]; then echo "install_chromium: not root, skipping (the browser test will be skipped)"; exit 0; fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium > /dev/null
