"""The exercises' solutions, one module per chapter (`ch01.py` has chapter 01's `SOLUTIONS`, by question number).

They live apart from the questions so that an edition can leave them out: the teacher edition (and this repository)
ship this package, the handout edition does not, and there `Question.solution()` says so (`coursetools edition`)."""
