"""The documentation users get is self-contained: links resolve, nothing cites material
that does not ship with the project, and every switch family's evidence page covers every
command its template renders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from render_fixtures import PORTS, document, ring3_plan
from vlanroute.model.platforms import PLATFORMS
from vlanroute.render.write import RenderOptions, render_files

ROOT = Path(__file__).resolve().parent.parent
MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHIPPED = [ROOT / "README.md", ROOT / "pyproject.toml",
           *(p for p in sorted((ROOT / "docs").rglob("*")) if p.suffix == ".md"),
           *sorted((ROOT / "vlanroute").rglob("*.py")), *sorted((ROOT / "templates").rglob("*"))]
# Development material outside the repository, which users never have.
UNSHIPPED = re.compile(r"\.\./shared|/work/|shared/reference|METHOD\.md|seeds/|switch-cli-facts|"
                       r"routing-literature|real-switch-evidence")
SWITCH_FAMILIES = sorted({p.family for p in PLATFORMS.values()})


def test_every_relative_link_in_the_docs_resolves() -> None:
    broken = []
    for md in MARKDOWN:
        for target in re.findall(r"\]\(([^)\s]+)\)", md.read_text()):
            path = target.split("#", 1)[0]
            if not path or re.match(r"\w+:", path):
                continue                      # an anchor on the same page, or a URL
            if not (md.parent / path).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
    assert not broken


def test_no_shipped_file_cites_material_users_do_not_have() -> None:
    hits = []
    for path in SHIPPED:
        if path.is_file():
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
                if UNSHIPPED.search(line):
                    hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits


@pytest.mark.parametrize("family", SWITCH_FAMILIES)
def test_every_family_has_an_evidence_page_its_template_points_to(family: str) -> None:
    page = ROOT / "docs" / "platforms" / f"{family}.md"
    assert page.is_file()
    assert f"({family}.md)" in (ROOT / "docs" / "platforms" / "README.md").read_text()
    header = (ROOT / "templates" / "switch" / f"{family}.j2").read_text().split("-#}", 1)[0]
    assert f"docs/platforms/{family}.md" in header


def command_stem(line: str) -> str:
    """The words of a config line before its first argument (a number, list or port)."""
    words = []
    for word in line.split():
        if any(c.isdigit() for c in word):
            break
        words.append(word)
    return " ".join(words)


@pytest.mark.parametrize("platform", [p for p in sorted(PORTS) if PLATFORMS[p].family != "linux-bridge"])
def test_the_evidence_page_names_every_command_the_template_renders(platform: str) -> None:
    page = (ROOT / "docs" / "platforms" / f"{PLATFORMS[platform].family}.md").read_text()
    stems: set[str] = set()
    for settings in ({}, {"eee": True, "flow_control": False}):
        files = render_files(document(ring3_plan(platform, **settings)), RenderOptions())
        for name, text in files.items():
            if name.startswith("switches/"):
                stems |= {command_stem(line) for line in text.splitlines()
                          if line.strip() and not line.lstrip().startswith("!")}
    assert {"switchport general allowed vlan add", "switchport trunk add"} & stems
    missing = sorted(s for s in stems if f"`{s}" not in page)
    assert not missing, f"commands without evidence on the {PLATFORMS[platform].family} page"
