"""Facts the documentation states that the code decides: exit codes and which switch
families push and audit drive. Read from the texts and compared with vlanroute.exitcodes
and the families' capabilities, so the docs cannot drift from the code again (README once
said a failed verification exits 3, docs/emulate.md named an exit code 4 that emulate
never returns, docs/push.md said only the 62xx could be pushed)."""

from __future__ import annotations

import re
from pathlib import Path

from vlanroute.drivers import FAMILIES
from vlanroute.exitcodes import ExitCode

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _families(text: str) -> set[str]:
    return set(re.findall(r"`([a-z0-9-]+)`", text))


def test_exit_code_table_is_the_enum() -> None:
    text = (ROOT / "docs" / "exit-codes.md").read_text()
    rows = {int(code): name for code, name in re.findall(r"^\| (\d+) \| `(\w+)` \|", text, re.M)}
    assert rows == {c.value: c.name for c in ExitCode}


def test_every_exit_code_the_docs_name_exists() -> None:
    codes = {c.value for c in ExitCode}
    for path in DOCS:
        for m in re.finditer(r"exit code (\d+)", path.read_text()):
            assert int(m.group(1)) in codes, f"{path.name}: {m.group(0)}"


def test_readme_gives_the_failed_verification_its_code() -> None:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"exit code 2 \((\d) for a failed verification\)", text)
    assert m and int(m.group(1)) == ExitCode.FAILED_CHECK
    assert "return ExitCode.FAILED_CHECK" in (ROOT / "vlanroute" / "commands" / "verify.py").read_text()


def test_emulate_documents_the_codes_it_returns() -> None:
    text = (ROOT / "docs" / "emulate.md").read_text()
    line = re.search(r"^Exit status: (.*?)\.\n\n", text, re.M | re.S)
    assert line
    documented = {int(n) for n in re.findall(r"(?:^|, )(\d+) ", line.group(1))}
    # OK or FAILED_CHECK from the checks; USAGE for a bad OUTDIR or a VM that cannot run (UserError).
    assert documented == {ExitCode.OK, ExitCode.FAILED_CHECK, ExitCode.USAGE}


def test_push_page_names_the_families_push_and_audit_drive() -> None:
    text = " ".join((ROOT / "docs" / "push.md").read_text().split())
    push = re.search(r"push drives the families (.*?) \(", text)
    preview = re.search(r"`push --dry-run` also reads (.*?);", text)
    audit = re.search(r"audit reads (.*?)\.", text)
    assert push and preview and audit
    caps = {name: f.capabilities for name, f in FAMILIES.items()}
    assert _families(push.group(1)) == {n for n, c in caps.items() if c.push}
    assert _families(preview.group(1)) == {n for n, c in caps.items() if c.preview and not c.push}
    assert _families(audit.group(1)) == {n for n, c in caps.items() if c.audit}
