"""Small generated repositories shared by test tiers."""

from __future__ import annotations

from pathlib import Path


def write_trainable_tree(repo: Path, files: int = 12, per_file: int = 12) -> None:
    """144 chunks in 12 files by default: enough for the default embedder to train and write
    vectors; more ``files`` make a run long enough to be interrupted."""
    for i in range(files):
        body = "".join(
            f"def handler_{i}_{j}(request, limit={j}):\n"
            f'    """Rotate key {i}.{j} within the rate limit."""\n'
            f"    return sorted(request.get(k) for k in range(limit))\n\n\n"
            for j in range(per_file)
        )
        (repo / f"module_{i}.py").write_text(body)
