#!/usr/bin/env bash
# Bookly's load benchmark (see bench/README.md): installs what it needs into .venv, then runs
# bench/run.py with these arguments, e.g.  bench/run.sh --customers 500 --latency-ms 1000 --duration 60
# Needs PostgreSQL (127.0.0.1:5432, user postgres, trust auth) and Redis (127.0.0.1:6379) running.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_env.sh
bookly_venv requirements.txt
install="python -m pip install --quiet --disable-pip-version-check"
$install -r bench/requirements.txt
exec python bench/run.py "$@"
