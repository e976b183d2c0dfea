"""The served OpenAPI document describes the four events, and what a real
server delivers has every field the document requires."""

from __future__ import annotations


from trackgrade.server.webhooks import endpoints

from tests.webhooks.receiver import Receiver
from tests.server.server_harness import start

TYPES = {"analysis.scores_ready", "analysis.completed", "analysis.failed", "credit.balance.low"}


def resolve(doc: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def conforms(doc: dict, schema: dict, value, where="event") -> list[str]:
    """Required fields, consts and enums, recursively (enough to catch drift)."""
    schema = resolve(doc, schema)
    problems = []
    if "const" in schema and value != schema["const"]:
        problems.append(f"{where}: {value!r} != {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} not in {schema['enum']}")
    if schema.get("type") == "object" and isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                problems.append(f"{where}.{name} missing")
        for name, sub in schema.get("properties", {}).items():
            if name in value and value[name] is not None:
                problems += conforms(doc, sub, value[name], f"{where}.{name}")
    return problems


def test_the_document_describes_each_event_and_real_deliveries_conform():
    rcv = Receiver()
    server = start()
    try:
        doc = server.request("GET", "/v1/openapi.json").json
        assert set(doc["webhooks"]) == TYPES
        for event_type, item in doc["webhooks"].items():
            op = item["post"]
            headers = {p["name"] for p in op["parameters"] if p["in"] == "header"}
            assert headers == {"Service-Signature", "webhook-id", "webhook-timestamp",
                               "webhook-signature"}
            schema = resolve(doc, op["requestBody"]["content"]["application/json"]["schema"])
            assert schema["properties"]["type"]["const"] == event_type
            assert {"2XX", "410"} <= set(op["responses"])
        key, account = server.key("live", credits=6)
        endpoints.add_endpoint(server.store, rcv.url, account, clock=server.clock)
        test_key, _ = server.key("test")
        endpoints.add_endpoint(server.store, rcv.url, _, clock=server.clock)
        failing = server.submit(key, file_name="a.wav").json          # credit.balance.low
        server.upload(failing, b"not audio")                          # analysis.failed
        done = server.submit(test_key, file_name="b.wav").json
        server.upload(done, b"x")                                     # scores_ready, completed
        events = [d.event for d in rcv.wait_for(4)]
        assert {e["type"] for e in events} == TYPES
        for event in events:
            op = doc["webhooks"][event["type"]]["post"]
            schema = op["requestBody"]["content"]["application/json"]["schema"]
            assert conforms(doc, schema, event) == [], event["type"]
    finally:
        server.stop()
        rcv.close()
