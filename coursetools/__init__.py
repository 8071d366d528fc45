"""Course tooling that runs only from a clone of the repository (never shipped to learners).

* `coursetools.runner`    execute every chapter headless into build/ (`python -m coursetools run`)
* `coursetools.authoring` keep chapter notebooks in the course's shape (`python -m coursetools tidy`)
* `coursetools.kaggle`    build the folders that publish the course on Kaggle (`python -m coursetools kaggle build`)
* `coursetools.site`      the course site (Sphinx, MyST-NB) built from the executed chapters; the runner calls it
* `coursetools.editions`  the handout (no solutions) and teacher editions (`python -m coursetools edition …`)
* `coursetools.folders`   published folders written all or nothing (`staged_folder`), disk faults in one sentence
* `coursetools.progress`  the runner's progress bar: the chapter running and its time so far
* `coursetools.verified`  the "verified on" record in docs/verified.* (`python -m coursetools verified`)

It may import `helpers` (the learner package); `helpers` never imports it.
"""

from pathlib import Path

#: The clone this package lives in, and the folders the tools read and write.
ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
BUILD = ROOT / "build"
