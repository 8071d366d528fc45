"""Course tooling: `python -m coursetools run [--quick]`, `selftest`, `wheelhouse`, `tidy [NB ...]`,
`kaggle build [--owner NAME]`, `verified`, `gpu-runs add ARCHIVE|page`, `edition handout|teacher [--out DIR]`,
`learner start NN|send CONN FILE|stop CONN`."""

from __future__ import annotations

import argparse
import os
import re
import sys
import tarfile
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
    selftest = sub.add_parser(
        "selftest", help="on a GPU machine: every chapter (QUICK), then the gpu/gpu2 tests; one table"
    )
    selftest.add_argument("--only", nargs="+", metavar="NN", help="run only chapters whose names start with these")
    selftest.add_argument("--no-chapters", action="store_true", help="run only the GPU tests")
    selftest.add_argument("--no-tests", action="store_true", help="run only the chapters")
    selftest.add_argument("--json", default=None, metavar="PATH", help="also save the results as JSON here")
    selftest.add_argument(
        "--bundle", default=None, metavar="PATH", help="also save results, executed chapters and figures as one archive"
    )
    selftest.add_argument(
        "--wheelhouse", default=None, metavar="DIR", help="first install what the self-test needs from DIR alone"
    )
    selftest.add_argument("--require-gpu", action="store_true", help="fail where torch can use no GPU")
    selftest.add_argument("--cell-timeout", type=float, default=90, metavar="S", help="seconds a cell may run")
    wheelhouse = sub.add_parser("wheelhouse", help="download the wheels the self-test needs beyond torch, to copy")
    wheelhouse.add_argument("--out", default=None, metavar="DIR", help="folder to write (default build/wheelhouse/)")
    wheelhouse.add_argument("--python", default=None, metavar="X.Y", help="the target's Python (default 3.12)")
    wheelhouse.add_argument(
        "--platform",
        action="append",
        default=None,
        metavar="TAG",
        help="a wheel platform tag (repeat; default manylinux x86-64)",
    )
    wheelhouse.add_argument(
        "--have", default=None, metavar="FILE", help="leave out the projects FILE lists (`pip freeze` of the target)"
    )
    tidy = sub.add_parser("tidy", help="put chapter notebooks in the course's shape (strip unchecked outputs)")
    tidy.add_argument("notebooks", nargs="*", help="notebooks to tidy (default: every chapter)")
    tidy.add_argument("--refresh-checked", action="store_true", help="re-execute and store checked outputs")
    kaggle = sub.add_parser("kaggle", help="build the folders that publish the course on Kaggle")
    kaggle_sub = kaggle.add_subparsers(dest="kaggle_command", required=True)
    kaggle_build = kaggle_sub.add_parser("build", help="write build/kaggle/: one folder per notebook and the dataset")
    kaggle_build.add_argument("--owner", default=None, help="your Kaggle user name (default: kaggle-metadata.json)")
    kaggle_build.add_argument("--out", default=None, help="output folder (default build/kaggle/ in the repository)")
    sub.add_parser("verified", help="record the chapters' passed runs found under build/ in docs/verified.*")
    runs = sub.add_parser("gpu-runs", help="keep a GPU run's bundle in docs/gpu-runs/, and write the measured page")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True)
    runs_add = runs_sub.add_parser("add", help="unpack a self-test's bundle (replacing that GPU kind's older run)")
    runs_add.add_argument("archive", help="the bundle: gpu-run.tar.gz from `selftest --bundle` or Kaggle")
    runs_sub.add_parser("page", help="write docs/measured.md from the kept runs")
    edition = sub.add_parser("edition", help="build the handout (no solutions) or teacher edition for instructors")
    edition.add_argument("edition", choices=["handout", "teacher"], help="which edition to build")
    edition.add_argument("--out", default=None, help="output folder (default build/handout/ or build/teacher/)")
    edition.add_argument(
        "--no-site", action="store_true", help="leave out the site (needs the chapters executed into build/ first)"
    )
    learner = sub.add_parser("learner", help="answer a chapter's questions in a kernel, as a learner (attacks)")
    learner_sub = learner.add_subparsers(dest="learner_command", required=True)
    learner_start = learner_sub.add_parser("start", help="run chapter NN (QUICK) up to its exercises; print CONN")
    learner_start.add_argument("chapter", help="the chapter's number, e.g. 08")
    learner_send = learner_sub.add_parser("send", help="run an attempt file's cells (split at `# %%`) there")
    learner_send.add_argument("connection", help="the connection file `learner start` printed")
    learner_send.add_argument("attempt", help="the attempt file")
    learner_send.add_argument("--timeout", type=float, default=300, help="seconds for the whole file")
    learner_stop = learner_sub.add_parser("stop", help="end the kernel")
    learner_stop.add_argument("connection")
    args = parser.parse_args(argv)

    if args.command == "learner":
        from . import learner as answering

        if args.learner_command == "start":
            print(answering.start(args.chapter))
            return 0
        if args.learner_command == "send":
            return 0 if answering.send(Path(args.connection), Path(args.attempt), args.timeout) else 1
        answering.stop(Path(args.connection))
        return 0

    if args.command == "selftest":
        return selftest_main(args)

    if args.command == "wheelhouse":
        return wheelhouse_main(args)

    here = {p.name for p in Path(__file__).parent.glob("*.py")}
    if not {"runner.py", "verified.py"} <= here:  # the Kaggle dataset's copy: the self-test's modules only
        print(f"This copy of coursetools carries only the self-test; `{args.command}` needs a clone of the repository.")
        return 2

    if args.command == "verified":
        from .verified import main as verified_main

        return verified_main()

    if args.command == "gpu-runs":
        from .gpu_runs import RunRefused, add_run, write_page

        if args.runs_command == "add":
            try:
                print(f"kept in {add_run(Path(args.archive))}")
            except (RunRefused, OSError, tarfile.TarError) as exc:
                print(f"Not kept: {exc}")
                return 1
        print(f"wrote {write_page()}")
        return 0

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


def selftest_main(args: argparse.Namespace) -> int:
    """`python -m coursetools selftest`: install from a wheelhouse if asked, run, print the table, exit 0 on a pass."""
    from .wheelhouse import WheelhouseError, install_wheelhouse

    if args.wheelhouse:  # first, before anything that needs what it installs is imported
        try:
            install_wheelhouse(Path(args.wheelhouse))
        except WheelhouseError as exc:
            print(f"The self-test could not install what it needs: {exc}")
            return 2
        print(f"Installed the self-test's dependencies from {args.wheelhouse} (torch untouched).")
    from .execute import discover_chapters
    from .selftest import run_self_test, write_results

    if args.only and not discover_chapters(only=args.only):
        print(f"No chapter matches {args.only!r}; chapters are named like 01_devices.ipynb.")
        return 2
    save = (lambda report: write_results(report, Path(args.json))) if args.json else None
    report = run_self_test(
        chapters=not args.no_chapters,
        tests=not args.no_tests,
        only=args.only,
        cell_timeout=args.cell_timeout,
        checkpoint=save,
        bundle=args.bundle,
    )
    print(report)
    if report.bundle:
        print(f"the run's bundle (results, executed chapters, figures): {report.bundle}")
    if report.bundle_error:
        print(f"The run's bundle could not be written: {report.bundle_error}")
    if not report.ok:
        print("\n" + (report.output[-20000:] or report.problem))
    if args.json:
        print(f"results saved to {write_results(report, Path(args.json))}")
    if args.require_gpu and not report.gpu.usable:
        print("--require-gpu: this run fails, since torch could use no GPU here.")
        return 1
    return 0 if report.ok else 1


def wheelhouse_main(args: argparse.Namespace) -> int:
    """`python -m coursetools wheelhouse`: write the offline wheelhouse and say how to use it."""
    from .wheelhouse import (
        DEFAULT_PLATFORMS,
        DEFAULT_PYTHON,
        DEFAULT_WHEELHOUSE,
        WheelhouseError,
        build_wheelhouse,
        listed_names,
        wheelhouse_size,
    )

    python, platforms = args.python or DEFAULT_PYTHON, tuple(args.platform or DEFAULT_PLATFORMS)
    if not re.fullmatch(r"3\.\d{1,2}", python):
        print(f"--python takes a version such as 3.12, not {python!r}.")
        return 2
    out = Path(args.out) if args.out else DEFAULT_WHEELHOUSE
    try:
        have = listed_names(Path(args.have).read_text(encoding="utf-8")) if args.have else set()
        build_wheelhouse(out, python=python, platforms=platforms, have=have)
    except (WheelhouseError, OSError) as exc:
        print(f"The wheelhouse could not be written: {exc}")
        return 1
    count, size = wheelhouse_size(out)
    print(
        f"{count} wheels, {size / 2**20:.0f} MiB, for Python {python} on {', '.join(platforms)}: {out}\n"
        f"Copy the folder to the GPU machine, then run there: python -m coursetools selftest --wheelhouse {out.name}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
