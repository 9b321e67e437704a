"""Small generated repositories shared by test tiers."""

from __future__ import annotations

from pathlib import Path


def write_trainable_tree(repo: Path) -> None:
    """144 chunks in 12 files: enough for the default embedder to train and write vectors."""
    for i in range(12):
        body = "".join(
            f"def handler_{i}_{j}(request, limit={j}):\n"
            f'    """Rotate key {i}.{j} within the rate limit."""\n'
            f"    return sorted(request.get(k) for k in range(limit))\n\n\n"
            for j in range(12)
        )
        (repo / f"module_{i}.py").write_text(body)
