"""Whether a notebook's outputs are those of a git revision's copy (code cells may differ; outputs may not).

    .venv/bin/python scripts/compare_notebook_outputs.py notebooks/simcse.ipynb [REV]

Exit 0 when every cell's outputs and the notebook's papermill parameters are equal; otherwise the first cells that
differ are printed and the exit status is 1.
"""

from __future__ import annotations

import json
import subprocess
import sys


def outputs(notebook: dict) -> list:
    return [(cell["cell_type"], cell.get("outputs")) for cell in notebook["cells"]]


def main() -> int:
    path, rev = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    old = json.loads(
        subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout
    )
    with open(path, encoding="utf-8") as f:
        new = json.load(f)
    a, b = outputs(old), outputs(new)
    bad = [i for i in range(max(len(a), len(b))) if i >= len(a) or i >= len(b) or a[i] != b[i]]
    if old["metadata"].get("papermill", {}).get("parameters") != new["metadata"].get("papermill", {}).get("parameters"):
        print("papermill parameters differ")
        bad.append(-1)
    for i in bad[:5]:
        print(
            f"cell {i} differs:\n  {rev}: {str(a[i] if 0 <= i < len(a) else None)[:600]}\n"
            f"  now: {str(b[i] if 0 <= i < len(b) else None)[:600]}"
        )
    print(f"{path}: {len(a)} vs {len(b)} cells, {len(bad)} differing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
