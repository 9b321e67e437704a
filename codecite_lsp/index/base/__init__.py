"""A shared base index: published once per commit (in CI) to an object store through LanceDB's
own S3/GCS/Azure support, and read by every teammate whose checkout descends from that commit.

One module per job: ``layout`` (what a base is on the store, what refuses one), ``git`` (the
checkout's commit and lineage), ``publish``, ``fetch`` (choose a base and copy it locally),
``copies`` (the local copies held and pruned), ``process`` (the base this process reads). The
names other packages use are these.
"""

from .git import head_commit, tracked_changes
from .layout import BaseError
from .process import OpenedBase, opened
from .publish import publish

__all__ = ["BaseError", "OpenedBase", "head_commit", "opened", "publish", "tracked_changes"]
