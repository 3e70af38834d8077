#!/usr/bin/env bash
# Install the pinned Codex CLI (npm @openai/codex) into the harness cache, for
# crates/harness/tests/real_codex.rs. Idempotent: fast when already installed.
#
#   .ci/harnesses/codex.sh    ->  stdout: PATH=<dir holding `codex`>
#
# The cache is ${BUREAU_HARNESS_CACHE:-$HOME/.cache/bureau-harnesses}. On failure it says so
# loudly on stderr and exits non-zero (the caller may then set BUREAU_HARNESS_SKIP_CODEX).
set -euo pipefail

VERSION=0.169.0
CACHE="${BUREAU_HARNESS_CACHE:-$HOME/.cache/bureau-harnesses}"
PREFIX="$CACHE/codex-$VERSION"
BIN="$PREFIX/node_modules/.bin"

fail() {
    echo "!!! .ci/harnesses/codex.sh: Codex CLI $VERSION could not be installed: $*" >&2
    exit 1
}

installed() {
    [ -x "$BIN/codex" ] && timeout 60 "$BIN/codex" --version 2>/dev/null | grep -qF "$VERSION"
}

if ! installed; then
    command -v npm >/dev/null || fail "npm is not installed (Node.js >= 18 with npm is needed)"
    mkdir -p "$PREFIX"
    timeout 600 npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
        "@openai/codex@$VERSION" >&2 || fail "npm install @openai/codex@$VERSION failed"
    installed || fail "installed, but \`$BIN/codex --version\` does not say $VERSION"
fi
echo "PATH=$BIN"
