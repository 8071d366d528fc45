"""Tests are arranged by what they guard: `unit/` the helpers package, `gpu/` the chapters' GPU claims
(shipped to Kaggle for the self-test), `course/` the notebooks, the tooling and the project files."""
