"""Names and ids from files or the API are printed as text, never as Rich
markup, and control characters are shown escaped (CONTRACT section 5,
"terminal text"); `external_id` with control characters is a 400. Before:
`remote list` crashed (MarkupError) on `broken[/nope].wav`, `[link=…]`
rendered as a hyperlink and an escape sequence in a name reached the terminal."""

from __future__ import annotations

import io
import uuid

import pytest
from typer.testing import CliRunner

from tests.server.server_harness import start

from trackgrade.cli import app  # noqa: E402
from trackgrade.cli.render import remote_list_table  # noqa: E402
from trackgrade.cli.terminal import PlainConsole  # noqa: E402

NAMES = ["broken[/nope].wav", "[link=http://evil.example]click me[/link].wav",
         "[bold red]loud[/].wav", ":skull: emoji.wav"]


@pytest.fixture(scope="module")
def server():
    s = start(test_in_flight=100)
    s.test_key = s.key("test")[0]
    yield s
    s.stop()


def run(server, *args, force_terminal=False):
    env = {"TRACKGRADE_BASE_URL": server.url, "TRACKGRADE_API_KEY": server.test_key,
           "COLUMNS": "200"}
    if force_terminal:
        env["FORCE_COLOR"] = "1"        # Rich writes colours and hyperlinks then
    return CliRunner().invoke(app, list(args), env=env)


def test_remote_list_prints_names_that_look_like_markup_as_they_are(server):
    for name in NAMES:
        assert server.submit(server.test_key, file_name=name).status == 202
    result = run(server, "remote", "list", "--limit", "0", force_terminal=True)
    assert result.exit_code == 0, result.output
    for name in NAMES:
        assert name in result.stdout, name
    assert "\x1b]8;" not in result.stdout                     # no OSC 8 hyperlink
    assert "💀" not in result.stdout


def test_remote_get_draws_a_markup_name_as_text(server):
    accepted = server.submit(server.test_key, file_name="broken[/nope].wav").json
    assert server.upload(accepted, b"RIFF" + bytes(5000)).status == 200
    server.wait(accepted["id"], server.test_key, until=lambda d: d["status"] == "complete")
    result = run(server, "remote", "get", accepted["id"])
    assert result.exit_code == 0, result.output
    assert "broken[/nope].wav" in result.stdout


@pytest.mark.parametrize("external_id", ["\x1b[2J\x1b[31mred", "line\nbreak", "nul\x00",
                                         "c1\x9bcsi", "bell\x07"])
def test_control_characters_in_external_id_are_400(server, external_id):
    reply = server.request("POST", "/v1/analyses", key=server.test_key, idem=str(uuid.uuid4()),
                           body={"file_name": "a.wav", "external_id": external_id})
    assert reply.status == 400, reply.body
    assert reply.error["code"] == "parameter_invalid" and reply.error["param"] == "external_id"


def test_control_characters_from_a_document_are_shown_escaped():
    """A row stored before the rule (or from another server): the escape
    sequences are printed as visible text, never sent to the terminal."""
    out = io.StringIO()
    console = PlainConsole(file=out, width=200, force_terminal=True)
    console.print(remote_list_table([{
        "id": "an_\x1b]0;pwned\x07", "created_at": "2026-01-01T00:00:00Z",
        "file_name": "evil\x1b[2J\u202etxt.wav", "status": "complete", "score": 80,
        "grade": {"letter": "B+"}}]))
    text = out.getvalue()
    assert "\\x1b[2J" in text and "\\u202e" in text and "\\x1b]0;pwned\\x07" in text
    assert "\x1b[2J" not in text and "\x1b]0;" not in text and "\u202e" not in text


def test_a_local_file_name_with_an_escape_is_shown_escaped_in_the_error(tmp_path):
    missing = tmp_path / "evil\x1b]0;pwned\x07[/x].wav"
    result = CliRunner().invoke(app, ["analyze", str(missing)])
    assert result.exit_code == 2
    assert "\\x1b]0;pwned\\x07[/x].wav" in result.stderr and "\x1b" not in result.stderr
