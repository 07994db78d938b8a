"""The docs' reference pages are generated from the code; these fail when the code and the docs drift."""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from pathlib import Path

from threadline.http.error_codes import ERROR_CODES
from threadline.http.errors import STATUS_OF
from threadline.refusals import RefusalCode
from threadline.settings import SECTIONS, VARIABLES

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


def test_every_setting_is_in_one_section_of_the_configuration_page():
    placed = [field for fields in SECTIONS.values() for field in fields]
    assert sorted(placed) == sorted(VARIABLES), (set(VARIABLES) ^ set(placed)) or "a setting is in two sections"
