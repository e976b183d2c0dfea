"""Regenerate the command examples of docs/cli.md (and the README's batch example)
from real runs, the way datasette keeps its docs with cog.

    python docs/gen_cli.py            rewrite every generated block in place
    python docs/gen_cli.py --check    exit 1 (with a diff) when a block differs from
                                      a fresh run (tests/cli/test_docs_cli.py runs this)

A generated block sits between `<!-- gen_cli: NAME -->` and `<!-- /gen_cli -->`
and holds a ```console fence: `$ command` lines, each followed by what the
command printed (stdout and stderr, as a terminal shows them; COLUMNS=96, no
terminal, so no progress bar). The commands run in a scratch directory with
the demo track (fixtures/demo.mp3) and synthetic tracks rendered by the tests'
generator (tests/truth_gen, cached), under the names the examples use; the
`remote` examples talk to a real `trackgrade serve` on a free port, the webhook
examples verify a real signature. What differs between two runs (ids, times,
durations, the scratch directory, signatures) is masked before --check
compares, so the check fails only when the documented output changed.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "docs" / "cli.md", ROOT / "README.md"]
BLOCK = re.compile(r"(<!-- gen_cli: (?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /gen_cli -->)",
                   re.S)
COLUMNS = "96"
SCRATCH_SHOWN = "~/music"            # how the scratch directory appears in the docs

PROMOS = [  # (file under promos/, synthetic spec)
    ("sunrise_edit.wav", {"style": "trance", "bpm": 138, "key": "F#", "scale": "minor",
                          "seconds": 30, "seed": 21}),
    ("amen_sketch.wav", {"style": "drum_and_bass", "bpm": 174, "key": "G", "scale": "minor",
                         "seconds": 30, "seed": 22}),
    ("warehouse_roller.wav", {"style": "tech_house", "bpm": 125, "key": "A", "scale": "minor",
                              "seconds": 30, "seed": 23}),
    ("tunnel_vision.wav", {"style": "techno", "bpm": 130, "key": "Eb", "scale": "major",
                           "seconds": 30, "seed": 24}),
    ("loud_demo_v3.wav", {"style": "house", "bpm": 124, "key": "A", "scale": "minor",
                          "seconds": 30, "seed": 25, "target_lufs": -4.0, "ceiling_db": 0.0}),
]
NIGHT_DRIVE = {"style": "deep_house", "bpm": 122, "key": "D", "scale": "minor", "seconds": 30,
               "seed": 26}


class Scratch:
    """The scratch directory the examples run in, and a shell to run them."""

    def __init__(self) -> None:
        sys.path.insert(0, str(ROOT))
        from tests.truth import render_specs

        self.dir = Path(tempfile.mkdtemp(prefix="trackgrade-docs-"))
        specs = [dict(spec, name=f"docs_{Path(name).stem}") for name, spec in PROMOS]
        specs.append(dict(NIGHT_DRIVE, name="docs_night_drive"))
        folder, tracks = render_specs(specs)
        rendered = {t["name"]: folder / t["file"] for t in tracks}
        promos = self.dir / "promos"
        (promos / "old").mkdir(parents=True)
        for name, _ in PROMOS:
            shutil.copyfile(rendered[f"docs_{Path(name).stem}"], promos / name)
        shutil.copyfile(ROOT / "fixtures" / "demo.mp3", promos / "demo.mp3")
        (promos / "old" / "bounce_fail.wav").write_bytes(b"RIFF\x24\x00\x00\x00WAVEjunk" + b"\0" * 64)
        (promos / "idea.ogg").write_bytes(b"OggS" + b"\0" * 60)
        (promos / "notes.txt").write_text("second drop needs more energy\n")
        shutil.copyfile(rendered["docs_night_drive"], self.dir / "night_drive.wav")
        shutil.copyfile(promos / "sunrise_edit.wav", self.dir / "a.wav")
        shutil.copyfile(ROOT / "fixtures" / "demo.mp3", self.dir / "b.mp3")
        (self.dir / "notes.wav").write_bytes(b"not wav!")
        os.symlink(ROOT / "fixtures", self.dir / "fixtures")
        bin_dir = Path(sys.executable).parent
        self.env = {**os.environ, "COLUMNS": COLUMNS, "TERM": "dumb", "NO_COLOR": "1",
                    "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        for name in ("TRACKGRADE_DATA", "TRACKGRADE_BASE_URL", "TRACKGRADE_API_KEY",
                     "TRACKGRADE_WEBHOOK_SECRET", "TRACKGRADE_DEBUG"):
            self.env.pop(name, None)

    def run(self, command: str, env: dict | None = None) -> str:
        """`$ command` and what it printed (stdout, then stderr), as the docs show it."""
        done = subprocess.run(["bash", "-c", command], cwd=self.dir, capture_output=True,
                              text=True, timeout=300, env={**self.env, **(env or {})})
        printed = (done.stdout + done.stderr).rstrip("\n")
        printed = "\n".join(line.rstrip() for line in printed.splitlines())
        return f"$ {command}\n{printed}".replace(str(self.dir), SCRATCH_SHOWN).rstrip()

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def errors(s: Scratch) -> str:
    return "\n".join(s.run(c) for c in ("trackgrade analyze x.wav", "trackgrade analyze notes.wav",
                                        "trackgrade analyze b.mp3 --mastering final"))


def analyze(s: Scratch) -> str:
    return s.run("trackgrade analyze fixtures/demo.mp3 --mastering master")


def analyze_json(s: Scratch) -> str:
    return s.run("trackgrade analyze a.wav b.mp3 --json | python3 -c 'import json, sys; "
                 "[print(d[\"file_name\"], d[\"score\"], d[\"grade\"][\"letter\"], "
                 "d[\"key\"][\"camelot\"]) for d in json.load(sys.stdin)]'")


def batch(s: Scratch) -> str:
    return s.run("trackgrade batch promos --jobs 2 --out grades.csv", {"COLUMNS": "120"})


def report(s: Scratch) -> str:
    return s.run("trackgrade report night_drive.wav")


def genres(s: Scratch) -> str:
    return s.run("trackgrade genres")


def remote(s: Scratch) -> str:
    """A real `trackgrade serve` with a live key of 10 credits."""
    sys.path.insert(0, str(ROOT))
    from tests.server.serve_process import ServeProcess

    data = s.dir / "server-data"
    created = subprocess.run([sys.executable, "-m", "trackgrade", "admin", "keys", "create",
                              "--data", str(data), "--credits", "10", "--json"],
                             capture_output=True, text=True, timeout=120, check=True)
    key = json.loads(created.stdout)["key"]
    server = ServeProcess(data, "--workers", "1", timeout=60, require=True)
    try:
        env = {"TRACKGRADE_BASE_URL": server.url, "TRACKGRADE_API_KEY": key}
        submitted = s.run("trackgrade remote analyze night_drive.wav", env)
        analysis_id = re.search(r"as ([0-9a-f-]{36})", submitted).group(1)
        status = ""
        for _ in range(240):
            status = s.run(f"trackgrade remote status {analysis_id}", env)
            if "diagnosis ready" in status or " failed " in status:
                break
            time.sleep(0.5)
        missing = s.run("trackgrade remote get 00000000-0000-4000-8000-000000000000", env)
        return "\n".join((submitted, status, missing))
    finally:
        server.stop()


def verify_webhook(s: Scratch) -> str:
    sys.path.insert(0, str(ROOT))
    from trackgrade import signing

    secret = "whsec_" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3"      # the docs' own example secret
    body = json.dumps({"id": "3f0c9a4e-5b1d-4c2a-9e7f-2d8b6a1c4e90", "object": "event",
                       "type": "analysis.completed", "created": int(time.time()),
                       "livemode": True, "data": {}}).encode()
    (s.dir / "body.json").write_bytes(body)
    fresh = signing.sign(secret, body, int(time.time()))
    stale = signing.sign(secret, body, int(time.time()) - 3600)
    return "\n".join((
        s.run(f"trackgrade verify-webhook --secret {secret} --header 'Service-Signature: {fresh}' "
              "--body-file body.json"),
        s.run(f"trackgrade verify-webhook --secret {secret} --header 'Service-Signature: {stale}' "
              "< body.json")))


SCENES = {f.__name__: f for f in (errors, analyze, analyze_json, batch, report, genres, remote,
                                  verify_webhook)}

VOLATILE = [  # what differs between two runs of the same command
    (re.compile(r"(│ (slowest|wall time)\s+│ ).*"), r"\1<timing>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"req_[0-9a-f]+"), "req_<id>"),
    (re.compile(r"t=\d+,v1=[0-9a-f]+"), "t=<t>,v1=<sig>"),
    (re.compile(r"\b\d+(\.\d+)? s\b"), "<n> s"),
    (re.compile(r"\b\d+(\.\d+)? files/s"), "<n> files/s"),
    (re.compile(r"\(\d+ KiB\)|\d+ KiB\)"), "<n> KiB)"),
]


def masked(text: str) -> str:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def fence(text: str) -> str:
    return f"```console\n{text}\n```\n"


def generate(names: set[str]) -> dict[str, str]:
    scratch = Scratch()
    try:
        return {name: fence(SCENES[name](scratch)) for name in sorted(names)}
    finally:
        scratch.close()


def main(argv: list[str]) -> int:
    check = "--check" in argv
    texts = {path: path.read_text(encoding="utf-8") for path in DOCS}
    wanted = {m.group("name") for text in texts.values() for m in BLOCK.finditer(text)}
    unknown = wanted - set(SCENES)
    if unknown:
        print(f"gen_cli: no scene for {sorted(unknown)}", file=sys.stderr)
        return 2
    fresh = generate(wanted)
    status = 0
    for path, text in texts.items():
        new = BLOCK.sub(lambda m: m.group(1) + fresh[m.group("name")] + m.group(4), text)
        if check:
            if masked(new) != masked(text):
                status = 1
                sys.stdout.writelines(difflib.unified_diff(
                    masked(text).splitlines(True), masked(new).splitlines(True),
                    f"{path.name} (written)", f"{path.name} (a fresh run)"))
        elif new != text:
            path.write_text(new, encoding="utf-8")
            print(f"gen_cli: rewrote {path.relative_to(ROOT)}")
    if check and status:
        print("gen_cli: the docs differ from a fresh run: python docs/gen_cli.py rewrites them",
              file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
