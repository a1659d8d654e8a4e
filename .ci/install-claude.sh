#!/usr/bin/env bash
# Install the pinned Claude Code CLI used by the e2e / plugin-layout tests.
#
# Why a private prefix: tests must run the exact client version whose behaviour the
# contract notes were verified against, without touching a global install. The cache
# dir is git-ignored (/.ci/cache/). The package ships a native binary, so the npm
# "EBADENGINE" warning on older node versions is harmless.
#
# Usage: .ci/install-claude.sh            -> prints the path of the claude binary
#        CLAUDE_CODE_VERSION=x.y.z .ci/install-claude.sh
set -euo pipefail

version="${CLAUDE_CODE_VERSION:-2.1.332}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="${HIPPO_CLAUDE_PREFIX:-$here/cache/claude-code-$version}"
bin="$prefix/node_modules/.bin/claude"

if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "^$version"; then
    echo "$bin"
    exit 0
fi

mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$version" >&2

if ! "$bin" --version >/dev/null 2>&1; then
    echo "install-claude.sh: $bin does not run" >&2
    exit 1
fi
echo "$bin"
