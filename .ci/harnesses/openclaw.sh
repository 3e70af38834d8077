#!/usr/bin/env bash
# Install the pinned OpenClaw (npm `openclaw`) and the Node.js 24 it needs (npm `node@24`,
# the official binaries as an npm package) into the harness cache, for
# crates/harness/tests/real_openclaw.rs. Idempotent: fast when already installed.
#
#   .ci/harnesses/openclaw.sh    ->  stdout: PATH=<dir holding `openclaw` and `node`>
#
# OpenClaw 2026.9.x requires Node >= 24.16 (on an older Node, `npm install openclaw` without a
# version silently resolves to an empty 0.0.1 placeholder). The printed directory holds an
# `openclaw` wrapper that runs it on Node 24, and `node` (Node 24: Bureau reads OpenClaw's
# transcript with `node:sqlite`). The cache is
# ${BUREAU_HARNESS_CACHE:-$HOME/.cache/bureau-harnesses}. On failure it says so loudly on
# stderr and exits non-zero (the caller may then set BUREAU_HARNESS_SKIP_OPENCLAW).
set -euo pipefail

VERSION=2026.9.6
NODE_SPEC=node@24
NODE_MIN=24.16.0
CACHE="${BUREAU_HARNESS_CACHE:-$HOME/.cache/bureau-harnesses}"
NODE_PREFIX="$CACHE/node-24"
NODE="$NODE_PREFIX/node_modules/.bin/node"
PREFIX="$CACHE/openclaw-$VERSION"
BIN="$PREFIX/bin"

fail() {
    echo "!!! .ci/harnesses/openclaw.sh: OpenClaw $VERSION could not be installed: $*" >&2
    exit 1
}

node_ok() {
    [ -x "$NODE" ] || return 1
    local v
    v="$(timeout 30 "$NODE" --version 2>/dev/null)" || return 1
    v="${v#v}"
    [ "$(printf '%s\n%s\n' "$NODE_MIN" "$v" | sort -V | head -n1)" = "$NODE_MIN" ] && [ "${v%%.*}" = 24 ]
}

installed() {
    node_ok && [ -x "$BIN/openclaw" ] && [ -L "$BIN/node" ] \
        && timeout 120 "$BIN/openclaw" --version 2>/dev/null | grep -qF "$VERSION"
}

if ! installed; then
    command -v npm >/dev/null || fail "npm is not installed"
    if ! node_ok; then
        mkdir -p "$NODE_PREFIX"
        timeout 600 npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error \
            "$NODE_SPEC" >&2 || fail "npm install $NODE_SPEC failed"
        node_ok || fail "$NODE_SPEC installed, but \`$NODE --version\` is not >= $NODE_MIN"
    fi
    mkdir -p "$PREFIX" "$BIN"
    # npm itself runs on Node 24 too, so that the engine check passes.
    PATH="$(dirname "$NODE"):$PATH" timeout 900 npm install --prefix "$PREFIX" --no-audit \
        --no-fund --loglevel=error "openclaw@$VERSION" >&2 \
        || fail "npm install openclaw@$VERSION failed"
    entry="$PREFIX/node_modules/openclaw/openclaw.mjs"
    [ -f "$entry" ] || fail "$entry is missing after npm install"
    node_real="$(readlink -f "$NODE")"
    cat > "$BIN/openclaw.tmp" <<WRAPPER
#!/bin/sh
# OpenClaw $VERSION on Node 24 (written by .ci/harnesses/openclaw.sh).
exec "$node_real" "$entry" "\$@"
WRAPPER
    chmod +x "$BIN/openclaw.tmp"
    mv "$BIN/openclaw.tmp" "$BIN/openclaw"
    ln -sfn "$node_real" "$BIN/node"
    installed || fail "installed, but \`$BIN/openclaw --version\` does not say $VERSION"
fi
echo "PATH=$BIN"
