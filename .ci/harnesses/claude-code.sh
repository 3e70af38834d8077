#!/usr/bin/env bash
# Install the Claude Code version Bureau's adapter is verified against, outside the clone.
# Prints one line `PATH=<dir>` (the directory holding `claude`); exits non-zero, loudly, when
# the npm registry install fails.
set -euo pipefail
VERSION=2.1.332
CACHE="${BUREAU_HARNESS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bureau-harnesses}"
DIR="$CACHE/claude-code-$VERSION"
BIN="$DIR/node_modules/.bin"
if ! "$BIN/claude" --version 2>/dev/null | grep -q "^$VERSION "; then
  mkdir -p "$DIR"
  # The package's binary comes in a per-platform optional dependency; no install script runs.
  if ! timeout 600 npm install --silent --no-audit --no-fund --prefix "$DIR" \
      "@anthropic-ai/claude-code@$VERSION" >&2; then
    echo "!!! npm install @anthropic-ai/claude-code@$VERSION FAILED" >&2
    exit 1
  fi
fi
"$BIN/claude" --version >&2
echo "PATH=$BIN"
