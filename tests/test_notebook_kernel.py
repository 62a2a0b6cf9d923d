"""Notebook runs start their kernel on IPC sockets (no "running over TCP without encryption" warning in the logs), and
a copy run on a profile other than the committed one says so above its prose."""

import nbformat
import papermill

from sentemb.notebooks import ipc_kernel_manager


def _run(tmp_path, **kwargs):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    notebook.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, tmp_path / "in.ipynb")
    papermill.execute_notebook(
        str(tmp_path / "in.ipynb"), str(tmp_path / "out.ipynb"), kernel_name="python3", progress_bar=False, **kwargs
    )
    return nbformat.read(tmp_path / "out.ipynb", as_version=4)


def test_the_kernel_runs_over_ipc_without_the_tcp_warning(tmp_path, capfd):
    executed = _run(tmp_path, kernel_manager_class=ipc_kernel_manager())
    assert executed.cells[0].outputs[0]["text"] == "42\n"
    assert "without encryption" not in capfd.readouterr().err


def test_a_copy_run_on_another_profile_says_so_before_its_prose():
    from sentemb.models.backbone import RAW_BERT
    from sentemb.notebooks import profile_banner

    banner = profile_banner("raw")
    assert "profile `raw`" in banner and RAW_BERT in banner and "`small` profile (all-MiniLM-L6-v2)" in banner
    assert "far below the paper's values" in banner  # the profile's caveat
