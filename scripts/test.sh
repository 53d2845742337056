#!/usr/bin/env bash
# The project's test command: type check, lint, the suite on the embedded database, and, when
# TEST_DATABASE_URL is set, the suite again on PostgreSQL (with Redis when TEST_REDIS_URL is set).
# The PostgreSQL pass runs on Node 24, the version the container image runs, fetched from the npm
# registry when the machine's Node is another (TEST_POSTGRES_NODE=current keeps the machine's).
# The tests that start processes are their own command: npm run test:processes.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Node $(node --version)"
# The type check and the lint each run on one core, so they run side by side; their outputs are
# printed one after the other, and either failing fails the command.
checks=$(mktemp -d)
trap 'rm -rf "$checks"' EXIT
npx tsc --noEmit >"$checks/types" 2>&1 &
types=$!
npx eslint . >"$checks/lint" 2>&1 &
lint=$!
types_rc=0 lint_rc=0
wait "$types" || types_rc=$?
wait "$lint" || lint_rc=$?
echo "== type check"
cat "$checks/types"
echo "== lint"
cat "$checks/lint"
if [ "$types_rc" -ne 0 ] || [ "$lint_rc" -ne 0 ]; then
  echo "type check or lint failed" >&2
  exit 1
fi
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
