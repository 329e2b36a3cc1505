"""``python -m arena.checkbot -- <command>``: the checker without the arena CLI."""

import argparse
import sys

from arena.checkbot import add_arguments, run_from_args


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m arena.checkbot", description=__doc__)
    add_arguments(parser)
    return run_from_args(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
