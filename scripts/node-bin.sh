#!/usr/bin/env bash
# Prints the path of a Node.js binary of the major version given (22, 24, ...): the machine's own
# `node` when it is that major, otherwise the `node` package of that major from the npm registry,
# installed once under ~/.cache/marketplace-api/node-<major> and reused by later runs.
set -euo pipefail
major=${1:?usage: scripts/node-bin.sh <major version>}
if [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  command -v node
  exit 0
fi
dir=${XDG_CACHE_HOME:-$HOME/.cache}/marketplace-api/node-$major
bin=$dir/node_modules/node/bin/node
if [ ! -x "$bin" ] || [ "$("$bin" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$major" ]; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{ "private": true }' > "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "node@$major" >&2
fi
echo "$bin"
