"""Command line: `python -m helpers doctor` describes this machine and what blocks its GPU;
`python -m helpers selftest` executes every chapter and runs the GPU tests (on any CUDA machine)."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="describe this machine and say what stops it from using a GPU")
    selftest = sub.add_parser("selftest", help="execute every chapter (QUICK), then the gpu/gpu2 tests; one table")
    selftest.add_argument("--no-chapters", action="store_true", help="run only the GPU tests")
    selftest.add_argument("--json", default=None, metavar="PATH", help="also save the results as JSON here")
    args = parser.parse_args(argv)

    if args.command == "selftest":
        from .selftest import run_self_test, write_results

        report = run_self_test(chapters=not args.no_chapters)
        print(report)
        if args.json:
            print(f"results saved to {write_results(report, args.json)}")
        return 0 if report.ok else 1

    from .environment import describe_machine, diagnose, report

    machine = describe_machine()
    print(report(machine))
    return 1 if any(f.level == "problem" for f in diagnose(machine)) else 0


if __name__ == "__main__":
    sys.exit(main())
