#!/usr/bin/env bash
# The project's test command: type check, lint, the suite on the embedded database, and, when
# TEST_DATABASE_URL is set, the suite again on PostgreSQL (with Redis when TEST_REDIS_URL is set).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== type check"
npx tsc --noEmit
echo "== lint"
npx eslint .
echo "== tests on PGlite (in-memory rate limits)"
env -u TEST_DATABASE_URL -u TEST_REDIS_URL -u REDIS_URL npx vitest run
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "== tests on PostgreSQL (${TEST_DATABASE_URL%%\?*}), Redis: ${TEST_REDIS_URL:-not set}"
  npx vitest run
else
  echo "== TEST_DATABASE_URL is not set: the PostgreSQL run is skipped (CI sets it)"
fi
