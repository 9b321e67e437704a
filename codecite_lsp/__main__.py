import sys

from .cli import main

# Guarded: importing this module (multiprocessing's spawn does) must not run the CLI.
if __name__ == "__main__":
    sys.exit(main())
