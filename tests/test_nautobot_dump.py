"""The dump of a freshly migrated Nautobot database that tests/nautobot_server.py restores
before `migrate` (tests/fixtures/nautobot/, written by `python tests/nautobot_server.py
--write-dump`): which dump a Nautobot version gets, that each committed dump is what its name
says, and that the installed Nautobot gets its own dump or the fallback, said in words. No
server runs here; tests/test_nautobot.py checks what the started server reports."""

from __future__ import annotations

import gzip
import importlib.util
import re
from pathlib import Path

import pytest

import nautobot_server
from nautobot_server import (DUMPS, FILL_KEY_LINE, VERSION_LINE, choose_dump, choose_filled, dump_header, dump_path,
                             filled_path)

COMMITTED = sorted(DUMPS.glob("nautobot-*.sql.gz"))


def _dumps(tmp_path: Path, *versions: str) -> Path:
    for v in versions:
        dump_path(v, tmp_path).write_bytes(b"")
    return tmp_path


def test_the_installed_versions_own_dump_is_restored(tmp_path: Path) -> None:
    where = _dumps(tmp_path, "2.4.43", "2.4.44", "2.4.45")
    chosen, said = choose_dump("2.4.44", where)
    assert chosen == where / "nautobot-2.4.44.sql.gz"
    assert said.startswith(f"restored {where / 'nautobot-2.4.44.sql.gz'} (Nautobot 2.4.44, the installed version)")


def test_an_upgrade_within_the_minor_release_restores_the_newest_older_dump_and_migrates(tmp_path: Path) -> None:
    where = _dumps(tmp_path, "2.4.9", "2.4.44", "2.4.50", "2.3.99")
    chosen, said = choose_dump("2.4.45", where)
    assert chosen == where / "nautobot-2.4.44.sql.gz"        # 2.4.44 > 2.4.9: compared as numbers
    assert "no dump for Nautobot 2.4.45" in said and "restored the dump of 2.4.44" in said
    assert "migrate applies the newer migrations" in said


@pytest.mark.parametrize(("version", "present"), [
    ("2.4.44", ["2.4.45", "3.0.0"]),    # only newer dumps: their tables may have columns 2.4.44 lacks
    ("2.5.0", ["2.4.44"]),              # another minor release
    ("2.4.44", []),
])
def test_without_a_usable_dump_the_full_migration_runs_and_says_why(tmp_path: Path, version: str,
                                                                     present: list[str]) -> None:
    where = _dumps(tmp_path, *present)
    (where / "nautobot-2.4.x.sql.gz").write_bytes(b"")   # not a version: never chosen
    chosen, said = choose_dump(version, where)
    assert chosen is None
    assert f"no dump for Nautobot {version}" in said and "the full migration" in said
    assert "--write-dump" in said


@pytest.mark.parametrize("version", [None, "2.4.44rc1", "2.4"])
def test_an_unknown_version_gets_the_full_migration(tmp_path: Path, version: str | None) -> None:
    chosen, said = choose_dump(version, _dumps(tmp_path, "2.4.44"))
    assert chosen is None and "the full migration" in said and "unknown" in said


def test_a_dump_is_committed() -> None:
    assert COMMITTED, f"no Nautobot dump in {DUMPS}: python tests/nautobot_server.py --write-dump"


def _applied(sql: str) -> set[tuple[str, str]]:
    """The (app, migration) rows of the dump's django_migrations table."""
    block = re.search(r"^COPY public\.django_migrations \(id, app, name, applied\) FROM stdin;\n(.*?)^\\\.$",
                      sql, flags=re.MULTILINE | re.DOTALL)
    assert block, "the dump has no django_migrations data"
    return {(row.split("\t")[1], row.split("\t")[2]) for row in block[1].splitlines()}


@pytest.mark.parametrize("dump", COMMITTED, ids=[p.name for p in COMMITTED])
def test_each_committed_dump_is_a_migrated_database_of_the_version_it_is_named_for(dump: Path) -> None:
    sql = gzip.decompress(dump.read_bytes()).decode()
    version = re.fullmatch(r"nautobot-(\d+\.\d+\.\d+)\.sql\.gz", dump.name)
    assert version, f"{dump.name}: not nautobot-X.Y.Z.sql.gz"
    assert sql.startswith(f"{VERSION_LINE}{version[1]}\n")
    # Whole: pg_dump's first and last words (a truncated dump lacks the last).
    assert "\n-- PostgreSQL database dump\n" in sql and "\n-- PostgreSQL database dump complete\n" in sql
    # --no-owner --no-privileges: it loads into a database of any owner.
    assert not re.search(r"^(ALTER .* OWNER TO|GRANT|REVOKE) ", sql, flags=re.MULTILINE)
    applied = _applied(sql)
    for app in ("dcim", "ipam", "extras", "contenttypes", "auth"):
        assert any(a == app for a, _ in applied), f"{dump.name}: no migration of {app} applied"
    assert "CREATE TABLE public.dcim_interface (" in sql and "CREATE TABLE public.dcim_cablepath (" in sql


@pytest.mark.skipif(nautobot_server.nautobot_version() is None, reason="nautobot is not installed")
def test_the_installed_nautobot_gets_its_own_dump_or_the_fallback_said_in_words() -> None:
    version = nautobot_server.nautobot_version()
    assert version is not None
    chosen, said = choose_dump(version)
    if dump_path(version).exists():
        assert chosen == dump_path(version) and "the installed version" in said
        # Every migration the installed Nautobot ships is applied in its dump.
        spec = importlib.util.find_spec("nautobot")
        assert spec is not None and spec.origin is not None
        package = Path(spec.origin).parent
        shipped = {(f.parent.parent.name, f.stem) for f in package.glob("*/migrations/[0-9]*.py")}
        assert len(shipped) > 300
        missing = shipped - _applied(gzip.decompress(chosen.read_bytes()).decode())
        assert not missing, f"{chosen.name} lacks migrations of the installed Nautobot: {sorted(missing)[:5]}"
    else:
        # Installed Nautobot without a dump of its own (an upgrade not yet dumped): the
        # older dump of the same minor release or the full migration, said in words.
        assert f"no dump for Nautobot {version}" in said
        assert ("then migrate applies the newer migrations" in said) if chosen else ("the full migration" in said)


# The filled dumps (tests/nautobot_filled_dump.py): the database as test_nautobot.py fills it,
# restored instead of filling through the API while its fill key is the current one.
FILLED = sorted(DUMPS.glob("filled-*.sql.gz"))


def _filled(where: Path, version: str, key: str) -> Path:
    path = filled_path(version, where)
    with gzip.open(path, "wt") as f:
        f.write(f"{VERSION_LINE}{version}\n{FILL_KEY_LINE}{key}\n-- a comment: with a colon\nSELECT 1;\n")
    return path


def test_a_filled_dump_is_restored_only_for_its_own_version_and_fill(tmp_path: Path) -> None:
    path = _filled(tmp_path, "2.4.44", "k1")
    assert dump_header(path)["fill-key"] == "k1"
    chosen, said = choose_filled("2.4.44", "k1", tmp_path)
    assert chosen == (path, said) and said.startswith(f"restored {path}")
    for version, key, why in [("2.4.44", "k2", "holds another fill"),      # other data or fill code
                              ("2.4.45", "k1", "no filled dump for Nautobot 2.4.45"),   # an upgrade: fill again
                              (None, "k1", "version is unknown")]:
        chosen, said = choose_filled(version, key, tmp_path)
        assert chosen is None and why in said and "filled through the API" in said
    # A dump renamed by hand is not taken for another version.
    path.rename(filled_path("2.4.46", tmp_path))
    assert choose_filled("2.4.46", "k1", tmp_path)[0] is None


@pytest.mark.parametrize("dump", FILLED, ids=[p.name for p in FILLED])
def test_each_committed_filled_dump_holds_the_current_fill(dump: Path, tmp_path: Path) -> None:
    """A change to the fill (tests/nautobot_fill.py, test_nautobot.fill_all or fill_broken)
    or to the seed's plan makes the committed dump stale: the tests would fill through the API
    again, a minute more. Here that fails, naming the command that writes it again."""
    version = re.fullmatch(r"filled-(\d+\.\d+\.\d+)\.sql\.gz", dump.name)
    assert version, f"{dump.name}: not filled-X.Y.Z.sql.gz"
    import test_nautobot      # skips (CI: fails) where no Nautobot server can start
    key = test_nautobot.fill_key(test_nautobot.render_seed(tmp_path), version[1])
    header = dump_header(dump)
    assert header.get("nautobot-version") == version[1]
    assert header.get("fill-key") == key, (f"{dump.name} holds another fill: run `python tests/nautobot_filled_dump.py` "
                                           "with that Nautobot installed, or delete it")
    sql = gzip.decompress(dump.read_bytes()).decode()
    assert "\n-- PostgreSQL database dump complete\n" in sql
    # No API token, session or change log in a committed file.
    for table in nautobot_server.UNDUMPED:
        assert f"CREATE TABLE public.{table} (" in sql and f"\nCOPY public.{table} " not in sql
