#!/usr/bin/env bash
# The one test command (README): installs what the editor tests need if missing, then lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUST_LOG=error LITELLM_LOCAL_MODEL_COST_MAP=True

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
