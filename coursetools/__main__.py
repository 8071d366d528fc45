"""Course tooling: `python -m coursetools run [--quick]`, `tidy [NB ...]`, `kaggle build [--owner NAME]`, `verified`,
`edition handout|teacher [--out DIR]`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursetools", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="execute every chapter headless into build/")
    run.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("QUICK", "") not in ("", "0"),
        help="small sizes and few repeats, as the tests use (also QUICK=1 in the environment)",
    )
    run.add_argument("--only", nargs="*", metavar="NN", help="run only chapters whose names start with these")
    run.add_argument("--jobs", type=int, default=1, help="chapters to execute at once (default 1)")
    run.add_argument("--build", default=None, help="output folder (default build/ in the repository)")
    tidy = sub.add_parser("tidy", help="put chapter notebooks in the course's shape (strip unchecked outputs)")
    tidy.add_argument("notebooks", nargs="*", help="notebooks to tidy (default: every chapter)")
    tidy.add_argument("--refresh-checked", action="store_true", help="re-execute and store checked outputs")
    kaggle = sub.add_parser("kaggle", help="build the folders that publish the course on Kaggle")
    kaggle_sub = kaggle.add_subparsers(dest="kaggle_command", required=True)
    kaggle_build = kaggle_sub.add_parser("build", help="write build/kaggle/: one folder per notebook and the dataset")
    kaggle_build.add_argument("--owner", default=None, help="your Kaggle user name (default: kaggle-metadata.json)")
    kaggle_build.add_argument("--out", default=None, help="output folder (default build/kaggle/ in the repository)")
    sub.add_parser("verified", help="record the chapters' passed runs found under build/ in docs/verified.*")
    edition = sub.add_parser("edition", help="build the handout (no solutions) or teacher edition for instructors")
    edition.add_argument("edition", choices=["handout", "teacher"], help="which edition to build")
    edition.add_argument("--out", default=None, help="output folder (default build/handout/ or build/teacher/)")
    edition.add_argument(
        "--no-site", action="store_true", help="leave out the site (needs the chapters executed into build/ first)"
    )
    args = parser.parse_args(argv)

    if args.command == "verified":
        from .verified import main as verified_main

        return verified_main()

    if args.command == "tidy":
        from .authoring import main as tidy_main

        return tidy_main(args.notebooks, args.refresh_checked)

    if args.command == "edition":
        from .editions import main as edition_main

        return edition_main(args.edition, args.out, site=not args.no_site)

    if args.command == "kaggle":
        from .kaggle import main as kaggle_main

        return kaggle_main(args.owner, args.out)

    from . import BUILD
    from .runner import run_course

    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    build_dir = Path(args.build) if args.build else BUILD
    return run_course(quick=args.quick, only=args.only, jobs=args.jobs, build_dir=build_dir)


if __name__ == "__main__":
    sys.exit(main())
