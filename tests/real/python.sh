# Sourced by the real-wheel scripts: the Python the wheels are for.
# real_python prints the interpreter to use (DENPEX_PYTHON, else Debian's python3.11, else a
# python3 on PATH that is 3.11) with pip, or prints why there is none and returns 1.
real_python() {
  local c
  for c in ${DENPEX_PYTHON:-} /usr/bin/python3.11 /usr/bin/python3 python3; do
    command -v "$c" >/dev/null 2>&1 || continue
    "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null || continue
    "$c" -m pip --version >/dev/null 2>&1 || continue
    command -v "$c"
    return 0
  done
  echo "no Python 3.11 with pip (the matrix's wheels are cp311; Debian 12: apt-get install python3-pip)"
  return 1
}
