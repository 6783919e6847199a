# Sourced by scripts/local and scripts/test: a virtual environment in .venv with cronctl installed
# (editable) and the extras asked for, made on first use and brought up to date when pyproject.toml
# or requirements.lock changes. cronctl's own dependencies are held to the versions in
# requirements.lock, the ones the image ships. Works where pip may not install into the system
# Python (Debian's and Ubuntu's "externally-managed-environment").
# Usage: ensure_venv [EXTRAS]   (e.g. ensure_venv "test,bench")

ensure_venv() {
  local extras="${1:-}" root venv python stamp wanted
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  venv="${CRONCTL_VENV:-$root/.venv}"
  python="${PYTHON:-python3}"
  if ! command -v "$python" >/dev/null 2>&1; then
    echo "cronctl: $python not found: install Python 3.11 or newer" >&2
    return 1
  fi
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "cronctl: $("$python" --version 2>&1) is too old: cronctl needs Python 3.11 or newer (PYTHON=... picks another)" >&2
    return 1
  fi
  if [ ! -x "$venv/bin/python" ]; then
    echo "== setting up $venv (first use)" >&2
    if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
      # Debian and Ubuntu ship venv without ensurepip unless python3-venv is installed: make the
      # environment without pip and install into it with the system's pip, if there is one.
      rm -rf "$venv"
      if ! { "$python" -m venv --without-pip "$venv" && "$python" -m pip --version >/dev/null 2>&1; }; then
        rm -rf "$venv"
        echo "cronctl: cannot make a virtual environment with $python: install python3-venv (apt-get install python3-venv)" >&2
        return 1
      fi
    fi
  fi
  pip() {
    if "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
      "$venv/bin/python" -m pip "$@"
    else
      "$python" -m pip --python "$venv/bin/python" "$@"
    fi
  }
  stamp="$venv/.cronctl-installed"
  wanted="$(cat "$root/pyproject.toml" "$root/requirements.lock" | cksum) [$extras]"
  # Without extras any install of this pyproject.toml will do (the test extras include the rest).
  if [ ! -f "$stamp" ] || { [ "$(cat "$stamp")" != "$wanted" ] &&
                           { [ -n "$extras" ] || [ "$(cut -d'[' -f1 < "$stamp")" != "${wanted%%\[*}" ]; }; }; then
    echo "== installing cronctl${extras:+ with $extras} into $venv" >&2
    # The lock's pins without their hashes: as constraints they hold versions, not the extras' tools.
    grep -E '^[A-Za-z0-9][A-Za-z0-9._-]*==' "$root/requirements.lock" | sed 's/ *\\$//' > "$venv/constraints.txt"
    pip install --quiet --disable-pip-version-check -c "$venv/constraints.txt" -e "$root${extras:+[$extras]}" || return 1
    echo "$wanted" > "$stamp"
  fi
  export PATH="$venv/bin:$PATH" VIRTUAL_ENV="$venv"
}
