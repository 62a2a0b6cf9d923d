"""Execute a paper's notebook with papermill.

``notebooks/<paper>.ipynb`` takes the parameters ``profile`` and ``run_missing`` (and ``extended``, for a paper
whose small profile keeps rows outside its time budget). The small
profile's executed copy replaces ``notebooks/<paper>.ipynb`` (so the committed notebook shows the
small profile's tables and figures); other profiles go to ``notebooks/executed/<profile>/``. ``SENTEMB_NOTEBOOKS``
moves both elsewhere (a benchmark or a test that runs into a temporary store must not replace the committed copy). The
executed notebook is written to a temporary file first, so a failed execution never replaces a
good one (the failed copy is kept beside it as ``*.failed.ipynb`` for inspection). The clock times papermill and
the kernel stamp on the notebook and on every cell are removed (:func:`strip_timestamps`), so re-executing a
notebook over the same run records gives the same bytes on any machine (paths are recorded relative to the
repository); the runs' own times are in their records. After a small-profile execution the paper README's generated
results block is rewritten from the notebook's summary cell (:mod:`sentemb.readme_summary`), when the
executed copy is the repository's own.

The kernel talks to papermill over IPC (Unix sockets in Jupyter's runtime folder) rather than ipykernel's default
of unencrypted local TCP, which ipykernel 7 warns about on every start; nothing leaves the machine either way. It runs
with the profile's torch threads (:func:`kernel_threads`).
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path

from sentemb import settings
from sentemb.errors import SentembError
from sentemb.profiles import PROFILES, get_profile
from sentemb.readme_summary import sync_readme

TIMING_KEYS = ("start_time", "end_time", "duration")


def strip_timestamps(notebook: dict) -> dict:
    """The notebook without papermill's start/end times and durations and the kernel's per-cell execution times,
    and with a fixed id for the parameters cell papermill injects (it draws a random one at every execution)."""
    for meta in [notebook.get("metadata", {})] + [cell.get("metadata", {}) for cell in notebook.get("cells", [])]:
        for key in TIMING_KEYS:
            meta.get("papermill", {}).pop(key, None)
        meta.pop("execution", None)
    for cell in notebook.get("cells", []):
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            cell["id"] = "injected-parameters"
        if "outputs" in cell:
            cell["outputs"] = merged_streams(cell["outputs"])
    return notebook


def merged_streams(outputs: list) -> list:
    """Consecutive outputs of one stream (stdout, stderr) as one output: how the kernel cuts a cell's printed text into
    messages depends on timing (on busy cores one print can arrive as two), and the committed copy must not."""
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and output.get("output_type") == "stream"
            and previous.get("output_type") == "stream"
            and previous.get("name") == output.get("name")
        ):
            previous["text"] = _text(previous["text"]) + _text(output["text"])
        else:
            merged.append(output)
    return merged


def _text(text) -> str:
    return "".join(text) if isinstance(text, list) else text


def _shown(path: Path) -> str:
    """A path as the notebook records it: relative to the repository when inside it (no machine's layout)."""
    return str(path.relative_to(settings.REPO_ROOT)) if path.is_relative_to(settings.REPO_ROOT) else str(path)


def output_path(paper: str, profile: str) -> Path:
    folder = settings.notebooks_root()
    committed = get_profile(profile).committed  # its executed notebook is the repository's own copy
    return folder / f"{paper}.ipynb" if committed else folder / "executed" / profile / f"{paper}.ipynb"


def is_committed_copy(path: Path) -> bool:
    """Whether ``path`` is the repository's own ``notebooks/<paper>.ipynb`` (not a copy under SENTEMB_NOTEBOOKS)."""
    return Path(path).resolve().parent == (settings.REPO_ROOT / "notebooks").resolve()


def ipc_kernel_manager():
    """A jupyter_client kernel manager whose kernels listen on IPC sockets instead of local TCP ports."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class IPCKernelManager(AsyncKernelManager):
        @default("transport")
        def _default_transport(self):
            return "ipc"

    return IPCKernelManager


# A kernel that imports torch on two busy cores can take longer than papermill's default of 60 s to answer.
KERNEL_START_TIMEOUT_S = 600


@contextmanager
def kernel_threads(profile: str):
    """The kernel papermill starts gets the profile's ``torch_threads`` (smoke: 1; through ``OMP_NUM_THREADS``, which
    torch reads when the kernel imports it), unless this process's environment sets it; the environment is restored
    once the notebook has run."""
    threads = get_profile(profile).threads_to_set()
    if threads is None:
        yield
        return
    os.environ["OMP_NUM_THREADS"] = str(threads)
    try:
        yield
    finally:
        del os.environ["OMP_NUM_THREADS"]


def profile_banner(profile: str) -> str:
    """The first cell of an executed copy on a profile other than the committed one: its prose was written for the
    committed profile, its tables and figures are this profile's."""
    mine, committed = get_profile(profile), next(p for p in PROFILES.values() if p.committed)
    backbone = mine.backbone_label or "the paper's backbone"
    return (
        f"**This copy ran on profile `{profile}`**: {mine.description}. Backbone: {backbone}. Every table and figure "
        f"below is this profile's; the prose cells were written for the `{committed.name}` profile "
        f"({committed.backbone_label}) and describe it, not this run." + (f" {mine.caveat}" if mine.caveat else "")
    )


def execute_notebook(paper: str, profile: str, run_missing: bool = True, extended: bool = False) -> Path:
    import papermill

    source = settings.REPO_ROOT / "notebooks" / f"{paper}.ipynb"
    if not source.is_file():
        raise SentembError(f"no notebook {source}")
    target = output_path(paper, profile)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.stem}.running.ipynb")
    started = time.perf_counter()
    print(f"[notebook] {paper} ({profile}) -> {_shown(target)}")
    try:
        parameters = {"profile": profile, "run_missing": run_missing}
        if extended:  # only then: a notebook without the parameter keeps its bytes
            parameters["extended"] = True
        with kernel_threads(profile):
            papermill.execute_notebook(
                str(source),
                str(tmp),
                parameters=parameters,
                cwd=str(settings.REPO_ROOT),
                kernel_name="python3",
                progress_bar=False,
                log_output=True,
                kernel_manager_class=ipc_kernel_manager(),
                start_timeout=KERNEL_START_TIMEOUT_S,
            )
    except Exception as exc:
        failed = target.with_name(f"{target.stem}.failed.ipynb")
        if tmp.exists():
            tmp.replace(failed)
        raise SentembError(
            f"notebook {source.name} failed for profile {profile}: {exc}\n  The executed copy "
            f"with the error is {failed}; earlier outputs were left untouched."
        ) from exc
    import nbformat

    executed = strip_timestamps(nbformat.read(tmp, as_version=4))
    executed.metadata.papermill.update(input_path=_shown(source), output_path=_shown(target))
    if not get_profile(profile).committed:
        # a fixed id (nbformat draws a random one), so that rerunning a profile rewrites its copy byte for byte
        executed.cells.insert(0, nbformat.v4.new_markdown_cell(profile_banner(profile), id=f"profile-{profile}"))
    nbformat.write(executed, tmp)
    tmp.replace(target)
    if get_profile(profile).committed and is_committed_copy(target) and sync_readme(paper, target):
        print(f"[notebook] {paper}: papers/{paper}/README.md's generated results block updated from the notebook")
    print(f"[notebook] {paper} ({profile}) done in {time.perf_counter() - started:.0f} s")
    return target
