"""pydantic models of JSON documents whose schema file is generated (vlanroute/bundle/schemagen.py).

Only documents without their own home module live here; the plan document is
bundle/document.py's PlanDocument. A data package imports no stage, so these models hold
plain types (a topology kind is a string here)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ErrorDocument(BaseModel):
    """Any command's --json output when it fails with a usage or input error."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    # `schema` is a BaseModel attribute: the field keeps the JSON name through an alias.
    schema_: Literal["vlanroute-error/1"] = Field(default="vlanroute-error/1", alias="schema")
    error: str
    exit_code: int = Field(ge=0)

    def to_json(self) -> dict[str, object]:
        return self.model_dump(by_alias=True)


class EngineInfo(BaseModel):
    """One routing engine as `vlanroute algorithms --json` lists it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    minimal: bool
    deadlock_free: bool
    refused_topologies: list[str]
    summary: str


class AlgorithmsDocument(BaseModel):
    """`vlanroute algorithms --json`: the engines routing.algorithm can name."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["vlanroute-algorithms/1"] = Field(default="vlanroute-algorithms/1", alias="schema")
    engines: list[EngineInfo] = Field(min_length=1)

    def to_json(self) -> dict[str, object]:
        return self.model_dump(by_alias=True)
