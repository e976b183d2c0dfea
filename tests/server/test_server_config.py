"""The settings table (trackgrade/config.py) and the `trackgrade serve` options."""

from __future__ import annotations

from dataclasses import fields

import pytest
from typer.testing import CliRunner

from trackgrade.config import SETTINGS, Settings, load_settings


def test_every_setting_is_typed_documented_and_read_from_its_variable():
    assert [s.name for s in SETTINGS] == [f.name for f in fields(Settings)]
    for setting in SETTINGS:
        assert setting.env.startswith("TRACKGRADE_") and len(setting.help) > 15
        assert isinstance(setting.default, setting.type)
    envs = [s.env for s in SETTINGS]
    assert len(set(envs)) == len(envs)


def test_reads_only_the_injected_mapping(monkeypatch):
    monkeypatch.setenv("TRACKGRADE_WORKERS", "7")
    assert load_settings({}).workers == 1
    settings = load_settings({"TRACKGRADE_WORKERS": "3", "TRACKGRADE_MAINTENANCE": "on",
                              "TRACKGRADE_DOCS_URL": "https://x.test/e",
                              "TRACKGRADE_SWEEP_INTERVAL": "0.5"})
    assert settings.workers == 3 and settings.maintenance is True
    assert settings.docs_url == "https://x.test/e" and settings.sweep_interval == 0.5


def test_overrides_win_and_none_is_ignored():
    settings = load_settings({"TRACKGRADE_PORT": "9000"}, port=None, host="0.0.0.0")
    assert settings.port == 9000 and settings.host == "0.0.0.0"
    assert load_settings({"TRACKGRADE_PORT": "9000"}, port=8081).port == 8081
    with pytest.raises(TypeError):
        load_settings({}, no_such_setting=1)


@pytest.mark.parametrize("env,value", [("TRACKGRADE_PORT", "eighty"),
                                       ("TRACKGRADE_MAINTENANCE", "maybe")])
def test_bad_values_name_the_variable(env, value):
    with pytest.raises(ValueError, match=env):
        load_settings({env: value})


def test_serve_command_options():
    import typer

    from trackgrade.cli.serve import serve

    app = typer.Typer()
    app.command("serve")(serve)
    app.command("other")(lambda: None)
    text = CliRunner().invoke(app, ["serve", "--help"], terminal_width=200).output
    for option in ("--host", "--port", "--data", "--workers", "--maintenance"):
        assert option in text
