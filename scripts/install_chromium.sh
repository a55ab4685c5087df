#!/usr/bin/env bash
# Install Debian's chromium when it is missing: the report tests (tests/e2e/test_report_html.py)
# open `perfmodel report` pages in headless Chromium. Never needed to *make* a report.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install_chromium: no /usr/bin/chromium and no apt-get; the report's browser tests will fail" >&2
    exit 0
fi
echo "install_chromium: installing Debian's chromium for the report tests" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
