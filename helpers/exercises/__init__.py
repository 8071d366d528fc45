"""Each chapter's exercises, one module per chapter (`ch01.py` has chapter 01's `QUESTIONS`)."""
