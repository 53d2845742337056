#!/usr/bin/env bash
# Prints the path of a PgBouncer 1.21 or later (the first version that keeps prepared statements
# in transaction mode, `max_prepared_statements`), for the PostgreSQL test pass through a pooler.
# Looks at $PGBOUNCER, then `pgbouncer` on the PATH and /usr/sbin, then a build cached in the
# user's cache directory (shared by every checkout on the machine, so a fresh clone does not build
# it again). Debian 12 packages 1.18, so as root it otherwise builds Debian 13's source package
# (fetched by apt with a private source list: the machine's apt setup is not changed).
# Prints nothing and exits 1 when none can be had. With --find it only looks, never builds.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/marketplace-api/pgbouncer

recent() {
  local version
  version=$("$1" --version 2>/dev/null | sed -n 's/^PgBouncer \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  [ -n "$version" ] || return 1
  set -- $version
  [ "$1" -gt 1 ] || { [ "$1" -eq 1 ] && [ "$2" -ge 21 ]; }
}

for candidate in "${PGBOUNCER:-}" "$(command -v pgbouncer || true)" /usr/sbin/pgbouncer "$cache/pgbouncer"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && recent "$candidate"; then
    echo "$candidate"
    exit 0
  fi
done

[ "${1:-}" != --find ] && [ "$(id -u)" = 0 ] || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  apt-get install -y -qq build-essential pkg-config libevent-dev libssl-dev libc-ares-dev
  mkdir -p "$work/lists/partial"
  echo "deb-src http://deb.debian.org/debian trixie main" >"$work/sources.list"
  apt_options=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=-" -o "Dir::State::Lists=$work/lists")
  apt-get "${apt_options[@]}" update -qq
  (cd "$work" && apt-get "${apt_options[@]}" source --download-only pgbouncer)
  tar -xzf "$work"/pgbouncer_*.orig.tar.gz -C "$work"
  cd "$work"/pgbouncer-*/
  ./configure --with-cares
  make -j"$(nproc)"
  mkdir -p "$cache"
  cp pgbouncer "$cache/pgbouncer"
} >"$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; exit 1; }
recent "$cache/pgbouncer" && echo "$cache/pgbouncer"
