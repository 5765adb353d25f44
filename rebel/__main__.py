"""``python -m rebel``: the command-line interface (see :mod:`rebel.cli`)."""
from rebel.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
