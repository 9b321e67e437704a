import os
import sys

# `python -m codecite_lsp` (the editors' fallback command, started in the workspace) puts the
# working directory first on sys.path: a repository's own `json/`, `logging.py` or `types.py`
# would then shadow the standard library, and importing it would run the repository's code.
# This package is already imported, so the entry is not needed to find the rest of it.
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from .cli import main  # after the path is made safe

# Guarded: importing this module (multiprocessing's spawn does) must not run the CLI.
if __name__ == "__main__":
    sys.exit(main())
