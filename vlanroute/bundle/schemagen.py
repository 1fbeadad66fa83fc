"""Write the schema files that are generated from pydantic models, so they cannot drift from
the code that produces the documents: `python -m vlanroute.bundle.schemagen` rewrites them,
`--check` only says which differ (tests/test_schemas_generated.py runs the same comparison).

Generated: plan.json (bundle/document.py's PlanDocument), error.json (ErrorDocument),
algorithms.json (AlgorithmsDocument), and from schemas/outputs.py render.json, verify.json,
audit.json, push.json, analyze.json, save.json, rollback.json, report.json, draw.json,
whatif.json, repair.json, cabling-check.json, lab.json, import.json, discover.json, watch.json,
emulate.json, emulate-traffic.json and export-nautobot.json: every schema file.

plan.json is PlanDocument's *validation* schema: what `vlanroute` accepts when it reads a
plan back, which every plan it writes satisfies (the serialiser writes the fields as read;
its serialization-mode schema is an opaque object because of the wrap serializer). Two
things the model cannot say are added here, by name: the keys every plan writes (pydantic
counts a field with a default as optional) and the routing/metrics keys that docs/json.md
promises inside their free-form objects, and the lists a VLAN record always has.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import json
from pathlib import Path
import sys
from typing import Any

from pydantic import BaseModel

DRAFT = "https://json-schema.org/draft/2020-12/schema"
# The schema files are data of the vlanroute.schemas package; this writer lives in bundle/
# because it reads bundle/document.py's model (a data package imports no stage).
HERE = Path(__file__).parent.parent / "schemas"


def _head(name: str, title: str) -> dict[str, Any]:
    return {"$schema": DRAFT, "$id": f"https://vlanroute.invalid/schemas/{name}.json", "title": title}


def plan_schema() -> dict[str, Any]:
    from vlanroute.bundle.document import PlanDocument

    body = PlanDocument.model_json_schema(mode="validation")
    body.pop("title", None)
    props = body["properties"]
    # Written only when the inventory has any (PlanDocument's serializer drops it otherwise).
    body["required"] = [k for k in props if k not in ("acknowledged_syntax", "operation")]
    # VlanDoc has no serializer of its own: a plan writes every VLAN's lists, empty or not.
    body["$defs"]["VlanDoc"]["required"] = ["id", "links", "switches"]
    props["routing"]["required"] = ["algorithm"]
    props["metrics"]["required"] = ["switches", "hosts", "vlan_count", "deadlock_free"]
    props["metrics"]["properties"] = {
        "link_load_optimum": {"type": "number"},
        "link_load_optimum_kind": {"enum": ["optimum", "distance", "switch", "bridge"]},
        "load_over_optimum": {"type": "number"},
    }
    props["acknowledged_syntax"]["description"] = ("the inventory's site.acknowledged_syntax "
                                                   "(docs/render.md); absent when it has none")
    props["operation"]["description"] = ("the inventory's operation section: the watcher's policy "
                                         "(docs/watch.md); absent when it has none")
    return {**_head("plan", "vlanroute plan --json: the plan document itself (plan.json, "
                    "docs/plan-format.md)"), **body}


def _from_model(name: str, title: str, model: type[BaseModel], absent_when_none: tuple[str, ...] = ()) -> dict[str, Any]:
    """A command's --json object: the model's serialization schema, every key required
    (`schema` too, despite its default: every object prints it) but those the object leaves
    out when they are None, which are then never null."""
    body = model.model_json_schema(mode="serialization", by_alias=True)
    body.pop("title", None)
    body.pop("description", None)
    body["required"] = list(body["properties"])
    for path in absent_when_none:          # "key" of the object, or "Model.key" of a record in it
        where, _, key = path.rpartition(".")
        record = body["$defs"][where] if where else body
        record["required"] = [k for k in record["required"] if k != key]
        prop = record["properties"][key]
        [kept] = [alt for alt in prop.pop("anyOf") if alt != {"type": "null"}]
        prop.pop("default", None)
        prop.update(kept)
    return {**_head(name, title), **body}


def error_schema() -> dict[str, Any]:
    from vlanroute.schemas.documents import ErrorDocument

    return _from_model("error", "any command's --json output when it fails with a usage or input error",
                       ErrorDocument)


def algorithms_schema() -> dict[str, Any]:
    from vlanroute.schemas.documents import AlgorithmsDocument

    return _from_model("algorithms", "vlanroute algorithms --json", AlgorithmsDocument)


def lab_schema() -> dict[str, Any]:
    """`vlanroute lab --json`: one object a lab action (up, down, cable-down/up), every
    key of each required."""
    from pydantic import TypeAdapter

    from vlanroute.schemas.outputs import LabCableDocument, LabDownDocument, LabUpDocument

    adapter: TypeAdapter[LabUpDocument | LabDownDocument | LabCableDocument] = TypeAdapter(
        LabUpDocument | LabDownDocument | LabCableDocument)
    body = adapter.json_schema(mode="serialization", by_alias=True)
    for model in (LabUpDocument, LabDownDocument, LabCableDocument):
        record = body["$defs"][model.__name__]
        record["required"] = list(record["properties"])
    return {**_head("lab", "vlanroute lab up|down|cable-down|cable-up --json"), **body}


def _output(name: str, model: str) -> Callable[[], dict[str, Any]]:
    """The schema of `vlanroute NAME --json` from schemas/outputs.py's `model` (imported
    when called, as the others are)."""
    def schema() -> dict[str, Any]:
        from vlanroute.schemas import outputs

        return _from_model(name, TITLES.get(name, f"vlanroute {name} --json"), getattr(outputs, model),
                           outputs.ABSENT_WHEN_NONE.get(name, ()))
    return schema


# Command -> the model of schemas/outputs.py its --json object is built by.
OUTPUTS = {"render": "RenderDocument", "verify": "VerifyDocument", "audit": "AuditDocument",
           "push": "PushDocument", "analyze": "AnalyzeDocument", "save": "SaveDocument",
           "rollback": "RollbackDocument", "report": "ReportDocument", "draw": "DrawDocument",
           "whatif": "WhatifDocument", "repair": "RepairDocument", "cabling-check": "CablingCheckDocument",
           "import": "ImportDocument", "discover": "DiscoverDocument", "emulate": "EmulateDocument",
           "emulate-traffic": "EmulateTrafficDocument", "export-nautobot": "ExportNautobotDocument",
           "watch": "WatchDocument"}

# Where the command line is not `vlanroute NAME --json`.
TITLES = {"emulate": "vlanroute emulate --json (and its --json-report file)",
          "emulate-traffic": "vlanroute emulate --traffic --json (and its --json-report file)"}

GENERATED: dict[str, Callable[[], dict[str, Any]]] = {
    "plan": plan_schema, "error": error_schema, "algorithms": algorithms_schema, "lab": lab_schema,
    **{name: _output(name, model) for name, model in OUTPUTS.items()}}


def text_of(name: str) -> str:
    """The file's exact text: the shipped schemas' layout (indent 1, final newline)."""
    return json.dumps(GENERATED[name](), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlanroute.bundle.schemagen",
                                     description="Rewrite the schema files generated from pydantic models.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file differs")
    args = parser.parse_args(argv)
    stale = []
    for name in GENERATED:
        path = HERE / f"{name}.json"
        new = text_of(name)
        if path.read_text() != new:
            stale.append(path.name)
            if not args.check:
                path.write_text(new)
    if args.check and stale:
        print(f"out of date: {', '.join(stale)} (run python -m vlanroute.bundle.schemagen)", file=sys.stderr)
        return 1
    print(("rewrote " if stale else "up to date: ") + ", ".join(stale or GENERATED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
