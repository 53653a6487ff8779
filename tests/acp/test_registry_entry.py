"""The ACP Registry entry (editor-clients/acp-registry/agentls/) against the registry's schema
(vendored in tests/acp/schema/) and the rules its CI adds (`build_registry.py`): the id is
the folder's, the version the package's, the uvx package pinned to it, the icon a 16 by 16
square drawn in `currentColor` only."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema
import pytest
from agentls import __version__

REPO = Path(__file__).parents[2]
ENTRY = REPO / "editor-clients" / "acp-registry" / "agentls"
SCHEMA = Path(__file__).with_name("schema") / "registry-agent.schema.json"
FIELDS = {"id", "name", "version", "description", "distribution"}
OPTIONAL = {"repository", "website", "authors", "license"}
PAINT = {"currentcolor", "none", "inherit"}
"""What the registry's CI lets an icon's fill and stroke be (it refuses any colour)."""


def _agent() -> dict[str, object]:
    loaded: dict[str, object] = json.loads((ENTRY / "agent.json").read_text())
    return loaded


def test_the_folder_holds_the_manifest_and_the_icon_only() -> None:
    assert sorted(p.name for p in ENTRY.iterdir()) == ["agent.json", "icon.svg"]


def test_the_manifest_meets_the_registry_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    checker = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    assert [error.message for error in checker.iter_errors(_agent())] == []


def test_the_manifest_meets_the_registry_ci_rules() -> None:
    agent = _agent()
    assert FIELDS <= set(agent) <= FIELDS | OPTIONAL
    assert agent["id"] == ENTRY.name
    assert agent["version"] == __version__, "bump agent.json with the package"
    # Pinned: the CI refuses @latest, and a version other than the entry's.
    assert agent["distribution"] == {"uvx": {"package": f"agentls=={__version__}", "args": ["acp"]}}


def _paints(element: ElementTree.Element) -> list[str]:
    values = [element.get(name, "") for name in ("fill", "stroke")]
    for declaration in element.get("style", "").split(";"):
        name, _, value = declaration.partition(":")
        if name.strip() in ("fill", "stroke"):
            values.append(value)
    return [value.strip().lower() for value in values if value.strip()]


def test_the_icon_is_a_small_square_in_the_current_colour() -> None:
    data = (ENTRY / "icon.svg").read_bytes()
    assert len(data) < 8192
    svg = ElementTree.fromstring(data)
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    assert (svg.get("width"), svg.get("height"), svg.get("viewBox")) == ("16", "16", "0 0 16 16")
    elements = list(svg.iter())
    assert all(element.tag.rsplit("}", 1)[-1] != "script" for element in elements)
    assert not any("href" in name for element in elements for name in element.attrib)
    paints = [value for element in elements for value in _paints(element)]
    assert set(paints) <= PAINT
    assert "currentcolor" in paints


@pytest.mark.parametrize(
    "colour", ['fill="#000"', 'stroke="red"', 'style="fill: blue"', 'style="stroke:#fff"']
)
def test_a_coloured_icon_is_refused(colour: str) -> None:
    """The icon check itself: each way the registry's CI finds a colour is found here too."""
    svg = ElementTree.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg"><path {colour}/></svg>')
    paints = [value for element in svg.iter() for value in _paints(element)]
    assert not set(paints) <= PAINT
    assert re.search(r"#|red|blue", " ".join(paints))
