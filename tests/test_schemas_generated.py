"""The schema files generated from pydantic models (vlanroute/bundle/schemagen.py) are the
ones shipped, so they cannot drift from the models; and plan.json generated is no weaker
than the hand-written one it replaced: each thing that one refused is still refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any
from collections.abc import Callable

import jsonschema
import pydantic
import pytest

from vlanroute import schemas
from vlanroute.cli import main
from vlanroute.bundle import schemagen as generate
from vlanroute.schemas.documents import ErrorDocument

INV = Path(__file__).resolve().parent.parent / "inventories"
V = jsonschema.Draft202012Validator


@pytest.mark.parametrize("name", sorted(generate.GENERATED))
def test_shipped_schema_is_the_generated_one(name: str) -> None:
    assert schemas.text(name) == generate.text_of(name), "run python -m vlanroute.bundle.schemagen"
    V.check_schema(schemas.load(name))


def test_check_mode_says_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    assert generate.main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


@pytest.fixture(scope="module")
def ring_plan() -> dict[str, Any]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["plan", str(INV / "seed-ring.yaml"), "--json"]) == 0
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def _without(*path: str | int) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        node: Any = d
        for p in path[:-1]:
            node = node[p]
        del node[path[-1]]
    return change


def _set(value: object, *path: str | int) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        node: Any = d
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value
    return change


# What the hand-written plan.json refused (git history: its required keys and types).
REFUSED = {
    **{f"no {k}": _without(k) for k in ("format", "name", "topology", "routing", "metrics", "switches",
                                        "hosts", "vlans", "cabling")},
    "format not a plan format": _set("vlanroute-plan/x", "format"),
    "routing without algorithm": _without("routing", "algorithm"),
    "metrics without deadlock_free": _without("metrics", "deadlock_free"),
    "metrics without vlan_count": _without("metrics", "vlan_count"),
    "unknown optimum kind": _set("guess", "metrics", "link_load_optimum_kind"),
    "VLAN without links": _without("vlans", 0, "links"),
    "VLAN without switches": _without("vlans", 0, "switches"),
    "VLAN id 4095": _set(4095, "vlans", 0, "id"),
    "warning not a string": _set([1], "warnings"),
    "vlans not a list": _set({}, "vlans"),
}


def test_a_real_plan_is_valid(ring_plan: dict[str, Any]) -> None:
    V(schemas.load("plan")).validate(ring_plan)


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_generated_plan_schema_still_refuses(ring_plan: dict[str, Any], what: str) -> None:
    bad = copy.deepcopy(ring_plan)
    REFUSED[what](bad)
    assert not V(schemas.load("plan")).is_valid(bad), what


def test_generated_plan_schema_checks_records_the_old_one_did_not(ring_plan: dict[str, Any]) -> None:
    # e.g. a host record's port name: the old schema took any "hosts" object.
    bad = copy.deepcopy(ring_plan)
    host = next(iter(bad["hosts"]))
    bad["hosts"][host]["port"] = "p 1; reload"
    assert not V(schemas.load("plan")).is_valid(bad)


def test_error_document_matches_its_schema() -> None:
    doc = ErrorDocument(error="bad", exit_code=2).to_json()
    assert doc == {"schema": "vlanroute-error/1", "error": "bad", "exit_code": 2}
    V(schemas.load("error")).validate(doc)
    for bad in ({**doc, "exit_code": -1}, {**doc, "extra": 1}, {k: v for k, v in doc.items() if k != "schema"}):
        assert not V(schemas.load("error")).is_valid(bad)
    with pytest.raises(pydantic.ValidationError):
        ErrorDocument(error="bad", exit_code=-1)


def test_algorithms_output_is_valid_and_the_schema_still_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    # What the hand-written algorithms.json refused: no engine, an engine key missing or extra.
    assert main(["algorithms", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    schema = V(schemas.load("algorithms"))
    schema.validate(data)
    engine = data["engines"][0]
    for bad in ({**data, "engines": []}, {**data, "schema": "vlanroute-algorithms/2"},
                {"engines": data["engines"]},
                {**data, "engines": [{k: v for k, v in engine.items() if k != "summary"}]},
                {**data, "engines": [{**engine, "minimal": "yes"}]},
                {**data, "engines": [{**engine, "extra": 1}]}):
        assert not schema.is_valid(bad), bad
