#!/usr/bin/env bash
# The one test command (README): installs the test extras and what the editor tests need if
# missing, then lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUST_LOG=error LITELLM_LOCAL_MODEL_COST_MAP=True

# README's set-up command installs the user's package only; the test extras come here.
extras="import pytest, pytest_lsp, xdist, hypothesis, mypy, importlinter, markdown_it, onnxruntime, moto.server"
if ! python -c "$extras" 2>/dev/null || ! command -v ruff >/dev/null || ! command -v nvim >/dev/null; then
  echo "installing the test extras (pip install -e '.[test]')"
  python -m pip install --quiet -e '.[test]'
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium for the chat-panel browser test"
  (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
    || { echo "could not install chromium (needs root and the Debian registry)"; exit 1; }
fi
lock=editors/vscode/package-lock.json installed=editors/vscode/node_modules/.package-lock.json
if [ ! -f "$installed" ] || [ "$lock" -nt "$installed" ]; then # missing, or the lock file changed
  (cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error)
fi

bash scripts/install_code_server.sh >/dev/null # real VS Code for tests/editors/test_vscode_real.py; cached
ruff check codecite_lsp tests bench
mypy
lint-imports
python -m pytest -q "$@"
