"""The private folders under agentls's state, made by many processes at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from agentls.disk.state import private_dir


def test_two_makers_of_one_folder_both_succeed(tmp_path: Path) -> None:
    # A batch's workers start together and make the same state folders: the one that comes
    # second must find the folder, not fail with "File exists".
    paths = [tmp_path / f"state{n}" / "agentls" / "sessions" / "key" for n in range(100)]
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def make_all() -> None:
        start.wait()
        for path in paths:
            try:
                private_dir(path)
            except OSError as error:
                failures.append(error)

    makers = [threading.Thread(target=make_all) for _ in range(8)]
    for maker in makers:
        maker.start()
    for maker in makers:
        maker.join()
    assert failures == []
    for path in paths:
        for folder in (path, path.parent, path.parents[2]):
            assert os.stat(folder).st_mode & 0o777 == 0o700
