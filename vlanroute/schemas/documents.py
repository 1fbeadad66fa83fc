"""pydantic models of JSON documents whose schema file is generated (vlanroute/bundle/schemagen.py).

Only documents without their own home module live here; the plan document is
bundle/document.py's PlanDocument."""

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
