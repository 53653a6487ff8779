"""Search: the `grep` and `list_files` tools (`tools.py`), run with ripgrep (`ripgrep.py`,
the wheel's `rg`) and else in Python, and how their results are bounded and worded
(`results.py`). Unsaved editor text is searched too."""
