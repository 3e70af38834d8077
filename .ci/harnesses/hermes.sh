#!/usr/bin/env bash
# Install the pinned Hermes (PyPI `hermes-agent`, with its `mcp` extra) into a virtual
# environment in the harness cache, for crates/harness/tests/real_hermes.rs. Idempotent: fast
# when already installed.
#
#   .ci/harnesses/hermes.sh    ->  stdout: PATH=<dir holding `hermes`>
#
# Hermes loads MCP servers only when the `mcp` package imports beside it (without it Bureau's
# tools are silently absent), so the `mcp` extra is installed and checked. Hermes 0.19 needs
# Python >= 3.11, < 3.14 (`$BUREAU_HERMES_PYTHON`, else `python3`). The cache is
# ${BUREAU_HARNESS_CACHE:-$HOME/.cache/bureau-harnesses}. On failure it says so loudly on
# stderr and exits non-zero (the caller may then set BUREAU_HARNESS_SKIP_HERMES).
set -euo pipefail

VERSION=0.19.0
PYTHON="${BUREAU_HERMES_PYTHON:-python3}"
CACHE="${BUREAU_HARNESS_CACHE:-$HOME/.cache/bureau-harnesses}"
VENV="$CACHE/hermes-$VERSION"
BIN="$VENV/bin"

# `hermes --version` writes an update-check file into HERMES_HOME: a throwaway one, never ~/.hermes.
PROBE_HOME="$(mktemp -d)"
trap 'rm -rf "$PROBE_HOME"' EXIT

fail() {
    echo "!!! .ci/harnesses/hermes.sh: Hermes $VERSION could not be installed: $*" >&2
    exit 1
}

# Not `| grep -q`: with pipefail, grep's early exit makes the pipeline fail (SIGPIPE).
version_ok() {
    case "$1" in *"v$VERSION "*) return 0 ;; *) return 1 ;; esac
}

installed() {
    [ -x "$BIN/hermes" ] && [ -x "$BIN/python" ] \
        && timeout 60 "$BIN/python" -c 'import mcp' 2>/dev/null \
        && version_ok "$(HERMES_HOME="$PROBE_HOME" timeout 120 "$BIN/hermes" --version 2>/dev/null)"
}

if ! installed; then
    command -v "$PYTHON" >/dev/null || fail "$PYTHON is not installed (Python 3.11-3.13 is needed)"
    "$PYTHON" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] < (3, 14)))' \
        || fail "$("$PYTHON" --version 2>&1) is not Python 3.11-3.13 (set BUREAU_HERMES_PYTHON)"
    rm -rf "$VENV"
    mkdir -p "$CACHE"
    timeout 300 "$PYTHON" -m venv "$VENV" >&2 || fail "$PYTHON -m venv $VENV failed"
    timeout 1200 "$BIN/python" -m pip install --quiet --disable-pip-version-check \
        "hermes-agent[mcp]==$VERSION" >&2 \
        || fail "pip install hermes-agent[mcp]==$VERSION failed"
    timeout 60 "$BIN/python" -c 'import mcp' \
        || fail "installed, but the \`mcp\` package Hermes needs for MCP does not import"
    installed || fail "installed, but \`$BIN/hermes --version\` does not say $VERSION"
fi
echo "PATH=$BIN"
