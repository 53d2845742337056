#!/usr/bin/env bash
# The tests that start the server, the CLI or a linter as separate processes, once, on the database
# TEST_DATABASE_URL names (the embedded one otherwise), on Node 24 like the PostgreSQL pass of
# npm test (TEST_POSTGRES_NODE=current keeps the machine's Node).
set -euo pipefail
cd "$(dirname "$0")/.."
process_node=${TEST_POSTGRES_NODE:-24}
if [ "$process_node" != current ]; then
  node_bin=$(scripts/node-bin.sh "$process_node")
  export PATH="$(dirname "$node_bin"):$PATH"
fi
echo "== tests that start processes, Node $(node --version), database: ${TEST_DATABASE_URL:-embedded}"
npx vitest run --project processes
