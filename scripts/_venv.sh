# Sourced by the scripts here: makes .venv from the lock file when it is missing or stale.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"

find_python() {
  for candidate in "${PLAIT_PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "plait needs Python 3.11 or newer on PATH (set PLAIT_PYTHON to choose one)" >&2
  return 1
}

stamp="$venv/.plait-lock"
want="$(cat "$root/requirements.lock" "$root/pyproject.toml" | cksum)"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python="$(find_python)"
  echo "setting up $venv with $($python --version) ..." >&2
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/requirements.lock"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$root"
  echo "$want" >"$stamp"
fi
