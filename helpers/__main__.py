"""Command line: `python -m helpers doctor` describes this machine and what blocks its GPU."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="describe this machine and say what stops it from using a GPU")
    parser.parse_known_args(argv)

    from .environment import describe_machine, diagnose, report

    machine = describe_machine()
    print(report(machine))
    return 1 if any(f.level == "problem" for f in diagnose(machine)) else 0


if __name__ == "__main__":
    sys.exit(main())
