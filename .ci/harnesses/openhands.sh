#!/usr/bin/env bash
# Install the pinned OpenHands CLI (PyPI `openhands`) into a virtual environment in the harness
# cache, for crates/harness/tests/real_openhands.rs. Idempotent: fast when already installed.
#
#   .ci/harnesses/openhands.sh    ->  stdout: PATH=<dir holding `openhands`>
#
# OpenHands 1.16 requires CPython 3.12 exactly (`Requires-Python: ==3.12.*`; PyPI offers only
# a 0.0.0 placeholder to any other Python). The interpreter is `$BUREAU_OPENHANDS_PYTHON`, else
# `python3.12` on PATH, else pyenv's newest 3.12: no registry this project reaches provides a
# CPython 3.12 (docs/harnesses/openhands.md), so a machine without one fails here, loudly. The cache is
# ${BUREAU_HARNESS_CACHE:-$HOME/.cache/bureau-harnesses}. On failure it says so loudly on
# stderr and exits non-zero (the caller may then set BUREAU_HARNESS_SKIP_OPENHANDS).
set -euo pipefail

VERSION=1.16.0
CACHE="${BUREAU_HARNESS_CACHE:-$HOME/.cache/bureau-harnesses}"
VENV="$CACHE/openhands-$VERSION"
BIN="$VENV/bin"

fail() {
    echo "!!! .ci/harnesses/openhands.sh: OpenHands $VERSION could not be installed: $*" >&2
    exit 1
}

is_312() {
    [ -n "$1" ] && "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null
}

find_python() {
    local p
    for p in "${BUREAU_OPENHANDS_PYTHON:-}" "$(command -v python3.12 || true)"; do
        if is_312 "$p"; then echo "$p"; return 0; fi
    done
    if command -v pyenv >/dev/null; then
        for p in $(ls -d "$(pyenv root)"/versions/3.12.* 2>/dev/null | sort -rV); do
            if is_312 "$p/bin/python3.12"; then echo "$p/bin/python3.12"; return 0; fi
        done
    fi
    return 1
}

# `openhands --version` takes 12-27 s: it imports the whole SDK.
installed() {
    [ -x "$BIN/openhands" ] || return 1
    local v
    v="$(timeout 120 "$BIN/openhands" --version 2>/dev/null)" || return 1
    case "$v" in *"$VERSION"*) return 0 ;; *) return 1 ;; esac
}

if ! installed; then
    PYTHON="$(find_python)" || fail "no CPython 3.12 found (OpenHands $VERSION requires ==3.12.*): \
install one (e.g. \`pyenv install 3.12\`) or set BUREAU_OPENHANDS_PYTHON to its python3.12"
    rm -rf "$VENV"
    mkdir -p "$CACHE"
    timeout 300 "$PYTHON" -m venv "$VENV" >&2 || fail "$PYTHON -m venv $VENV failed"
    timeout 1800 "$BIN/python" -m pip install --quiet --disable-pip-version-check \
        "openhands==$VERSION" >&2 || fail "pip install openhands==$VERSION failed"
    installed || fail "installed, but \`$BIN/openhands --version\` does not say $VERSION"
fi
echo "PATH=$BIN"
