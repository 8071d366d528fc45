"""Course tooling: the headless runner, the GPU self-test, the site, the editions, the Kaggle build.

It runs from a clone of the repository; only the self-test's part (`SELFTEST_MODULES`) also ships,
beside `helpers/`, in the Kaggle helpers dataset, where the `gpu_self_test` notebook runs it.

* `coursetools.execute`   execute one chapter headless (papermill): the executor every tool here uses
* `coursetools.runner`    execute every chapter headless into build/ (`python -m coursetools run`)
* `coursetools.selftest`  the GPU self-test: chapters and GPU tests on a GPU machine's own torch
  (`python -m coursetools selftest`); `coursetools.gpu_test_results` is its pytest plugin
* `coursetools.wheelhouse` what the self-test needs beyond torch, as wheels for a machine without a network
* `coursetools.authoring` keep chapter notebooks in the course's shape (`python -m coursetools tidy`)
* `coursetools.kaggle`    build the folders that publish the course on Kaggle (`python -m coursetools kaggle build`)
* `coursetools.site`      the course site (Sphinx, MyST-NB) built from the executed chapters; the runner calls it
* `coursetools.editions`  the handout (no solutions) and teacher editions (`python -m coursetools edition …`)
* `coursetools.folders`   published folders written all or nothing (`staged_folder`), disk faults in one sentence
* `coursetools.progress`  the runner's progress bar: the chapter running and its time so far
* `coursetools.verified`  the "verified on" record in docs/verified.* (`python -m coursetools verified`)
* `coursetools.gpu_runs`  a GPU run's bundle, kept in docs/gpu-runs/, and the page of what GPUs measured

It may import `helpers` (the learner package); `helpers` never imports it.
"""

from pathlib import Path

#: The modules of this package the Kaggle helpers dataset carries: the self-test and what it imports.
SELFTEST_MODULES = (
    "__init__.py",
    "__main__.py",
    "execute.py",
    "selftest.py",
    "gpu_runs.py",
    "gpu_test_results.py",
    "wheelhouse.py",
)

#: The clone this package lives in, and the folders the tools read and write.
ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
BUILD = ROOT / "build"
