# Sourced by scripts/test and .ci/run: installs PostgreSQL's server with apt where it is missing and we may,
# so that the event store's tests run against PostgreSQL (they start a throwaway cluster of their own).
plait_has_postgres() {
  command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
}
if ! plait_has_postgres && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing PostgreSQL for the event store's tests ..." >&2
  { apt-get install -y -qq --no-install-recommends postgresql \
      || { apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql; }; } >/dev/null 2>&1 \
    || echo "could not install PostgreSQL; the tests that need it skip, saying why" >&2
fi
