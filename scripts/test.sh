#!/usr/bin/env bash
# The project's test command: type check, lint, the suite on the embedded database, and, when
# TEST_DATABASE_URL is set, the suite again on PostgreSQL (with Redis when TEST_REDIS_URL is set).
# The PostgreSQL pass runs on Node 24, the version the container image runs, fetched from the npm
# registry when the machine's Node is another (TEST_POSTGRES_NODE=current keeps the machine's).
# The tests that start processes are their own command: npm run test:processes.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Node $(node --version)"
echo "== type check"
npx tsc --noEmit
echo "== lint"
npx eslint .
echo "== tests on PGlite (in-memory rate limits)"
env -u TEST_DATABASE_URL -u TEST_REDIS_URL -u REDIS_URL npx vitest run --project suite
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  postgres_node=${TEST_POSTGRES_NODE:-24}
  if [ "$postgres_node" != current ]; then
    node_bin=$(scripts/node-bin.sh "$postgres_node")
    export PATH="$(dirname "$node_bin"):$PATH"
  fi
  echo "== tests on PostgreSQL (${TEST_DATABASE_URL%%\?*}), Redis: ${TEST_REDIS_URL:-not set}, Node $(node --version)"
  npx vitest run --project suite
else
  echo "== TEST_DATABASE_URL is not set: the PostgreSQL pass is skipped (CI sets it)"
fi
