"""`trackgrade admin`: CliRunner for the surface, real subprocesses for the
cross-process promise (a running holder of the data directory sees every
admin change on its next read)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from trackgrade.errors import TrackgradeError
from trackgrade.server import accounts
from trackgrade.server.store import open_store
from trackgrade.cli import app

PYTHON = sys.executable
ADMIN = [PYTHON, "-m", "trackgrade", "admin"]


@pytest.fixture
def data(tmp_path):
    return tmp_path / "data"


def admin(*args, env=None):
    return CliRunner().invoke(app, ["admin"] + [str(a) for a in args], env=env)


def create(data, *extra) -> dict:
    result = admin("keys", "create", "--data", data, "--json", *extra)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def one_error_line(result, code):
    assert result.exit_code == code
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trackgrade: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_keys_create_json_prints_the_key_once_and_stores_its_hash(data):
    made = create(data, "--credits", "12", "--plan", "studio")
    assert set(made) == {"key", "key_id", "account"}
    assert made["key"].startswith("svc_live_") and len(made["key"]) >= 9 + 32
    with open_store(data) as store:
        key, account = accounts.authenticate(store, made["key"])
        assert key["id"] == made["key_id"] and account["id"] == made["account"]
        assert (account["plan"], account["billing"], account["credits"]) == ("studio", "credits", 12)
    on_disk = b"".join(p.read_bytes() for p in data.iterdir() if p.is_file())
    assert made["key"].encode() not in on_disk and made["key"][9:].encode() not in on_disk


def test_keys_create_human_output_and_test_mode_on_an_existing_account(data):
    made = create(data)
    result = admin("keys", "create", "--data", data, "--mode", "test", "--account", made["account"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    test_key = next(line for line in lines if line.startswith("svc_test_"))
    with open_store(data) as store:
        key, account = accounts.authenticate(store, test_key)
        assert account["id"] == made["account"] and key["livemode"] is False


def test_keys_list_never_shows_secrets(data):
    first, second = create(data), create(data, "--mode", "test", "--billing", "comp")
    listed = admin("keys", "list", "--data", data, "--json")
    rows = json.loads(listed.stdout)
    assert [r["key_id"] for r in rows] == [first["key_id"], second["key_id"]]
    assert rows[1]["mode"] == "test" and rows[1]["billing"] == "comp"
    human = admin("keys", "list", "--data", data)
    for made in (first, second):
        for text in (listed.stdout, human.stdout):
            assert made["key"] not in text and made["key"][9:25] not in text
        assert made["key_id"] in human.stdout


def test_free_plan_keys_are_not_eligible(data):
    made = create(data, "--plan", "free")
    with open_store(data) as store:
        with pytest.raises(TrackgradeError) as err:
            accounts.authenticate(store, made["key"])
    assert err.value.code == "not_eligible"


def test_revoke_then_the_key_is_refused(data):
    made = create(data)
    result = admin("keys", "revoke", made["key_id"], "--data", data)
    assert result.exit_code == 0 and made["key_id"] in result.stdout
    with open_store(data) as store:
        with pytest.raises(TrackgradeError) as err:
            accounts.authenticate(store, made["key"])
    assert err.value.code == "invalid_api_key"
    listed = json.loads(admin("keys", "list", "--data", data, "--json").stdout)
    assert listed[0]["revoked_at"]


def test_bad_things_and_bad_usage_exit_1_and_2_with_one_line(data, tmp_path):
    made = create(data)
    one_error_line(admin("keys", "revoke", "key_nope", "--data", data), 1)
    one_error_line(admin("keys", "create", "--data", data, "--account", "acct_nope"), 1)
    one_error_line(admin("credits", "acct_nope", "--add", "3", "--data", data), 1)
    one_error_line(admin("embed", "an_nope", "on", "--data", data), 1)
    one_error_line(admin("webhooks", "add", "https://hooks.example/x", "--account", "acct_nope",
                         "--data", data), 1)
    one_error_line(admin("webhooks", "add", "http://hooks.example/x", "--account",
                         made["account"], "--data", data), 2)
    one_error_line(admin("keys", "list", "--data", tmp_path / "missing"), 2)
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    one_error_line(admin("keys", "create", "--data", a_file), 2)
    one_error_line(admin("credits", made["account"], "--add", "0", "--data", data), 2)
    one_error_line(admin("embed", "an_x", "maybe", "--data", data), 2)
    one_error_line(admin("keys", "create", "--data", data, "--plan", "gold"), 2)
    one_error_line(admin("keys", "revoke", "--data", data), 2)


def test_credits_top_up(data):
    made = create(data, "--credits", "2")
    result = admin("credits", made["account"], "--add", "40", "--data", data, "--json")
    assert json.loads(result.stdout) == {"account": made["account"], "credits": 42}


@pytest.mark.parametrize("url,ok", [("https://hooks.example.com/tg", True),
                                    ("http://127.0.0.1:9000/hook", True),
                                    ("http://localhost:9000/hook", True),
                                    ("http://[::1]:9000/hook", True),
                                    ("http://10.0.0.5/hook", False),
                                    ("ftp://hooks.example.com/", False),
                                    ("https:///nohost", False)])
def test_webhook_urls_https_only_except_loopback(data, url, ok):
    made = create(data)
    result = admin("webhooks", "add", url, "--account", made["account"], "--data", data, "--json")
    assert (result.exit_code == 0) is ok, result.stderr
    if ok:
        hook = json.loads(result.stdout)
        assert hook["secret"].startswith("whsec_") and len(hook["secret"]) > 38
        with open_store(data) as store:
            stored = store.select("webhooks.by_account", (made["account"],))
        assert [(w["url"], w["secret"]) for w in stored] == [(url, hook["secret"])]


def test_data_dir_from_the_environment(tmp_path):
    env = {"TRACKGRADE_DATA": str(tmp_path / "from-env")}
    result = admin("keys", "create", "--json", env=env)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["key_id"] in admin("keys", "list", env=env).stdout


HOLDER = """
import sys
from trackgrade.errors import TrackgradeError
from trackgrade.server import accounts
from trackgrade.server.store import open_store
store = open_store(sys.argv[1])
print("ready", flush=True)
for line in sys.stdin:
    cmd, _, arg = line.strip().partition(" ")
    if cmd == "auth":
        try:
            accounts.authenticate(store, arg); answer = "ok"
        except TrackgradeError as exc:
            answer = exc.code
    elif cmd == "maintenance":
        doc = store.get("settings", "maintenance"); answer = str(bool(doc and doc["on"]))
    elif cmd == "credits":
        answer = str(store.get("accounts", arg)["credits"])
    elif cmd == "new-analysis":
        with store.transaction() as txn:
            txn.put("analyses", {"id": arg, "account_id": "a", "key_id": "k", "livemode": True,
                                 "status": "complete", "created_at": "2026", "embed": False})
        answer = "made"
    elif cmd == "embed":
        answer = str(store.get("analyses", arg)["embed"])
    elif cmd == "hooks":
        answer = str(len(store.select("webhooks.by_account", (arg,))))
    print(answer, flush=True)
"""


def test_admin_commands_reach_a_process_holding_the_store_open(data):
    made = create(data, "--credits", "5")
    holder = subprocess.Popen([PYTHON, "-c", textwrap.dedent(HOLDER), str(data)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(line: str) -> str:
        holder.stdin.write(line + "\n")
        holder.stdin.flush()
        return holder.stdout.readline().strip()

    def run(*args) -> subprocess.CompletedProcess:
        done = subprocess.run(ADMIN + [str(a) for a in args] + ["--data", str(data)],
                              capture_output=True, text=True, timeout=60)
        assert "Traceback" not in done.stderr
        return done

    try:
        assert holder.stdout.readline().strip() == "ready"
        assert ask(f"auth {made['key']}") == "ok"
        assert run("keys", "revoke", made["key_id"]).returncode == 0
        assert ask(f"auth {made['key']}") == "invalid_api_key"           # the very next request
        assert ask("maintenance") == "False"
        assert run("maintenance", "on").returncode == 0
        assert ask("maintenance") == "True"
        assert run("maintenance", "off").returncode == 0
        assert ask("maintenance") == "False"
        assert run("credits", made["account"], "--add", "10").returncode == 0
        assert ask(f"credits {made['account']}") == "15"
        assert ask("new-analysis an_held") == "made"                       # the holder writes too
        assert run("embed", "an_held", "on").returncode == 0
        assert ask("embed an_held") == "True"
        hook = run("webhooks", "add", "https://hooks.example/x", "--account", made["account"],
                   "--json")
        assert json.loads(hook.stdout)["secret"].startswith("whsec_")
        assert ask(f"hooks {made['account']}") == "1"
        missing = run("keys", "revoke", "key_nope")
        assert missing.returncode == 1 and missing.stderr.count("\n") == 1
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert holder.returncode == 0
