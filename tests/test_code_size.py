"""The core stays readable in pieces: no module of ``shared/sentemb`` longer than 500 lines, no function or method
longer than 80, and the command line a dispatch table of at most 400 lines (its subcommands live in
``sentemb/commands/``). A module or function that outgrows its size is split by what it does, not trimmed."""

from __future__ import annotations

import ast

import pytest

from sentemb import settings

CORE = settings.REPO_ROOT / "shared" / "sentemb"
MODULES = sorted(CORE.rglob("*.py"))
MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_CLI_LINES = 500, 80, 400


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``name (n lines)`` of every function or method in ``source`` longer than ``limit`` lines."""
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > limit
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(CORE)))
def test_no_core_module_or_function_outgrows_its_size(path):
    source = path.read_text(encoding="utf-8")
    lines = len(source.splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(CORE)} has {lines} lines (at most {MAX_MODULE_LINES})"
    assert not long_functions(source), f"{path.relative_to(CORE)}: functions over 80 lines: {long_functions(source)}"


def test_the_command_line_is_a_dispatch_table():
    lines = len((CORE / "cli.py").read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_CLI_LINES, f"cli.py has {lines} lines; move a subcommand's logic to sentemb/commands/"


def test_the_check_counts_a_function_from_its_def_to_its_last_line():
    body = "\n".join(f"    x{i} = {i}" for i in range(80))
    assert long_functions(f"def short():\n{body[: body.rindex(chr(10))]}\n") == []
    assert long_functions(f"class C:\n    def long(self):\n    {body.replace(chr(10), chr(10) + '    ')}\n") == [
        "long (81 lines)"
    ]
