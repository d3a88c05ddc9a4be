"""`python -m agentic_evals`: the `agentic-evals` command, for environments without the console script."""

import sys

from .cli import main

if __name__ == '__main__':
    sys.exit(main())
