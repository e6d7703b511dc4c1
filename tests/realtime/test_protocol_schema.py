"""The JSON Schema document the editor's protocol types are generated from
(geon/graphs/protocol_schema.py): every message of both sides is in it, once."""

from __future__ import annotations

from geon.graphs import protocol, protocol_schema


def test_every_message_is_a_definition_in_its_side_union() -> None:
    definitions = protocol_schema.protocol_document()["$defs"]
    sides = (("server", protocol.SERVER_MESSAGES), ("client", protocol.CLIENT_MESSAGES))
    for side, messages in sides:
        refs = definitions[f"{side.title()}Message"]["anyOf"]
        union = [ref["$ref"].rsplit("/", 1)[1] for ref in refs]
        assert union == [protocol_schema.message_name(kind, side) for kind in messages]
        for kind, name in zip(messages, union, strict=True):
            assert definitions[name]["properties"]["type"] == {"const": kind}


def test_shared_schemas_are_referenced_not_copied() -> None:
    definitions = protocol_schema.protocol_document()["$defs"]
    assert definitions["RunMessage"]["properties"]["run"] == {"$ref": "#/$defs/RunInfo"}
    assert definitions["PresenceMessage"]["properties"]["cursor"] == {"$ref": "#/$defs/Cursor"}
    assert definitions["RunInfo"]["required"] == protocol.RUN["required"]
