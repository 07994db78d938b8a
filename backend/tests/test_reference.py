"""The docs' reference pages are generated from the code; these fail when the code and the docs drift."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import typing
from collections import Counter
from pathlib import Path

from threadline.http.error_codes import ERROR_CODES
from threadline.http.errors import STATUS_OF
from threadline.refusals import RefusalCode
from threadline.settings import SECTIONS, VARIABLES
from threadline.settings.reading import PREFIX

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "\n".join(path.read_text() for path in (ROOT / "backend" / "threadline").rglob("*.py"))
LISTED = {(error.status, error.code) for error in ERROR_CODES}


def test_the_generated_reference_pages_say_what_the_code_says():
    result = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "generate.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_refusal_code_has_its_status_and_its_row():
    assert set(STATUS_OF) == set(typing.get_args(RefusalCode))
    assert {(status, code) for code, status in STATUS_OF.items()} <= LISTED


def test_every_error_the_server_answers_is_in_the_table():
    answered = {(int(status), code) for status, code in re.findall(r'ApiError\(\s*(\d{3}),\s*"([A-Z_]+)"', SOURCE)}
    answered |= {(STATUS_OF[code], code) for code in re.findall(r'Refused\(\s*"([A-Z_]+)"', SOURCE)}
    assert answered <= LISTED, answered - LISTED
    codes = set(re.findall(r'ErrorInfo\(\s*"([A-Z_]+)"', SOURCE))
    assert codes <= {code for _, code in LISTED}, codes - {code for _, code in LISTED}


def test_every_setting_is_written_once():
    """A setting is one field of one section, its variables named in that field's `env(...)` and nowhere else as a
    declaration: no list of settings by name (the reference's sections are the structs), no second struct restating
    a section's fields for a service (a service is handed the section)."""
    declared = Counter()
    restated = []
    fields = set(VARIABLES)
    for path in (ROOT / "backend" / "threadline").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "env":
                declared.update(arg.value for arg in node.args if isinstance(arg, ast.Constant))
            if isinstance(node, (ast.Tuple, ast.List)):
                named = [item.value for item in node.elts if isinstance(item, ast.Constant) and item.value in fields]
                if len(named) >= 3:
                    restated.append(f"{path.name}:{node.lineno} lists {named}")
            if isinstance(node, ast.ClassDef) and node.name.endswith("Settings") and "env(" not in ast.unparse(node):
                annotated = [item.target.id for item in node.body if isinstance(item, ast.AnnAssign)]
                if len(same := [name for name in annotated if name in fields]) >= 3:
                    restated.append(f"{path.name}: class {node.name} restates {same}")
    assert [name for name, times in declared.items() if times > 1] == []
    assert set(declared) == {name for variable in VARIABLES.values() for name in variable.env.names} - {
        PREFIX + name for name in declared
    }
    assert sum(len(section.__struct_fields__) for section in SECTIONS.values()) == len(VARIABLES)
    assert restated == []
