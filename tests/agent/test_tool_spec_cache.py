"""A tool's spec is built once per argument model, name and description, and shared afterwards."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from plait.agent.arguments import tool_spec
from plait.agent.tools import ReadFileArgs


class _CountedArgs(BaseModel):
    """Say something."""

    text: str = Field(description="What to say.")

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        _BUILT.append(cls.__name__)
        return super().model_json_schema(*args, **kwargs)


_BUILT: list[str] = []


def test_the_schema_is_built_once_for_many_calls() -> None:
    _BUILT.clear()
    specs = [tool_spec("say", _CountedArgs) for _ in range(5)]
    assert _BUILT == ["_CountedArgs"]
    assert all(s == specs[0] for s in specs)
    assert specs[0].description == "Say something."
    assert set(specs[0].parameters["properties"]) == {"text"}


def test_another_name_or_description_is_another_spec() -> None:
    plain = tool_spec("read_file", ReadFileArgs)
    renamed = tool_spec("read", ReadFileArgs)
    described = tool_spec("read_file", ReadFileArgs, "Read a file.")
    assert (plain.name, renamed.name) == ("read_file", "read")
    assert described.description == "Read a file."
    assert plain.description.startswith("Read a text file")
    assert plain.parameters == renamed.parameters == described.parameters
    assert "title" not in plain.parameters and "description" not in plain.parameters
