"""Genre detection, honestly evaluated: K-fold over every labelled item.

    python benchmarks/eval_genre.py [--per-style N | --grid visible] [--markdown]

Items (benchmarks/genre_corpus.py): synthetic renders of every generator style
(several per style, tempo/key/seed/length varied) and the real clips of
../shared/truth/real (families mapped from `genre_truth`; the others are
"no family"). Every labelled item is read by a model fitted without its fold
(benchmarks/derive_genre_model.py: same folds, the Amen cuts kept together);
unlabelled real clips by the model fitted on all labelled items (the shipped
genre_model.json). "Before" is main's detector (trackgrade/grading/genres.py
at `git show main:`) on the same measurements.

Prints the confusion matrices (synthetic and real apart), the calibration
table (confidence bins against accuracy, with counts) and every real clip's
reading before and after.
"""

from __future__ import annotations

import argparse
import os
import json
import importlib.util
import inspect
import subprocess
import sys
import tempfile
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from derive_genre_model import K, OUTSIDE, fit, folds, labelled  # noqa: E402
from genre_features import corpus  # noqa: E402

from trackgrade.grading.genre_model import GenreModel, default_model  # noqa: E402
from trackgrade.grading.genres import FAMILY_KEYS, detect_genre  # noqa: E402

BINS = (0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.01)
SHORT = {"house": "hou", "techno": "tno", "trance": "trc", "drum_and_bass": "dnb", "dubstep": "dub",
         "hardstyle": "hst", "breakbeat": "brk", "uk_garage": "ukg", "electro": "elc",
         "downtempo": "dtm", "ambient": "amb"}


# the git ref of "before" (main by default; TRACKGRADE_BEFORE_REF names another, e.g. the branch point)
BEFORE_REF = os.environ.get("TRACKGRADE_BEFORE_REF", "main")


def main_detector():
    """detect_genre of main's grading/genres.py (today's classifier), loaded from git."""
    src = subprocess.run(["git", "show", f"{BEFORE_REF}:trackgrade/grading/genres.py"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "genres_main.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("genres_main", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["genres_main"] = module
    spec.loader.exec_module(module)
    data = subprocess.run(["git", "show", f"{BEFORE_REF}:trackgrade/grading/genre_model.json"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout
    model = GenreModel.from_data(json.loads(data))
    # the inputs that detector reads (each pass has added some)
    takes = set(inspect.signature(module.detect_genre).parameters) - {"model"}
    return lambda **kw: module.detect_genre(**{k: v for k, v in kw.items() if k in takes}, model=model)


def readings(items: list[dict]) -> list[dict]:
    """Each measured item with `before` and `after` GenreGuess (after: out of fold when labelled)."""
    old = main_detector()
    shipped = default_model()
    lab = labelled(items)
    fold = dict(zip((id(i) for i in lab), folds(lab)))
    prior = shipped.outside["log_prior"] if shipped.outside else None
    models = {f: fit([i for i in lab if fold[id(i)] != f], shipped.tempo_weight, shipped.temperature, prior)
              for f in range(K)}
    out = []
    for item in lab:
        inp = item["inputs"]
        model = models[fold[id(item)]]
        out.append({**item, "after": detect_genre(**inp, model=model),
                    "before": old(**inp)})
    return out


SURE = 0.6       # CONTRACT.md section 5: at 0.6 or more a family is claimed


def confusion(rows: list[dict], which: str) -> str:
    """Rows: truth (the families, then `outside`); columns: the family read at
    SURE or more, or `<0.6` (no family claimed). Right: the own family at SURE
    or more; for `outside`, no family claimed."""
    fams = [k for k in FAMILY_KEYS + (OUTSIDE,) if any(r["family"] == k for r in rows)]
    cols = list(FAMILY_KEYS)
    lines = ["| truth \\ read | " + " | ".join(SHORT[c] for c in cols) + " | <0.6 | right |",
             "|---" * (len(cols) + 3) + "|"]
    for f in fams:
        mine = [r for r in rows if r["family"] == f]
        counts = [sum(r[which].key == c and r[which].confidence >= SURE for r in mine) for c in cols]
        unsure = sum(r[which].confidence < SURE for r in mine)
        right = unsure if f == OUTSIDE else counts[cols.index(f)]
        lines.append(f"| {f} | " + " | ".join(str(c) if c else "." for c in counts)
                     + f" | {unsure or '.'} | {right}/{len(mine)} |")
    return "\n".join(lines)


def calibration(rows: list[dict], which: str) -> str:
    lines = ["| confidence | items | right | accuracy |", "|---|---|---|---|"]
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        b = [r for r in rows if lo <= r[which].confidence < hi]
        right = sum(r[which].key == r["family"] for r in b)
        acc = f"{right / len(b):.2f}" if b else "-"
        lines.append(f"| {lo:.1f}-{min(hi, 1.0):.1f} | {len(b)} | {right} | {acc} |")
    sure = [r for r in rows if r[which].confidence >= 0.6]
    right = sum(r[which].key == r["family"] for r in sure)
    lines.append(f"| **>= 0.6** | {len(sure)} | {right} | "
                 f"{(right / len(sure)) if sure else float('nan'):.2f} |")
    return "\n".join(lines)


def summary(rows: list[dict], which: str) -> str:
    right = sum(r[which].key == r["family"] for r in rows)
    sure = [r for r in rows if r[which].confidence >= 0.6]
    low = [r for r in rows if r[which].confidence < 0.5]
    return (f"{right}/{len(rows)} right ({right / max(len(rows), 1):.0%}); confidence >= 0.6 on "
            f"{len(sure)} ({sum(r[which].key == r['family'] for r in sure)} right); below 0.5 "
            f"(target `electronic`) on {len(low)}")


def reading(g) -> str:
    alts = ", ".join(f"{SHORT[k]} {p:.2f}" for k, p in g.candidates[1:3])
    return f"{g.key} {g.confidence:.2f} ({alts})"


def report(rows: list[dict]) -> str:
    out = [f"Items: {len(rows)}. {K}-fold, out of fold, whole sources held out (a real clip's "
           "dataset, a recorded style, the Amen cuts): every item read by a model fitted without "
           "its source. `before`: main's detector on the same measurements."]
    parts = (("synthetic renders", "synthetic"), ("recorded-instrument renders", "recorded"),
             ("real clips", "real"))
    for name, kind in parts:
        part = [r for r in rows if r["kind"] == kind]
        if not part:
            continue
        fam = [r for r in part if r["family"] != OUTSIDE]
        oth = [r for r in part if r["family"] == OUTSIDE]
        out.append(f"\n### {name}: {len(fam)} of a family, {len(oth)} outside\n")
        for which in ("before", "after"):
            if fam:
                out.append(f"- {which}, families: {summary(fam, which)}")
            if oth:
                sure = sum(r[which].confidence >= SURE for r in oth)
                out.append(f"- {which}, outside: {sure} of {len(oth)} read a family at {SURE} or more")
        for which in ("before", "after"):
            out.append(f"\nConfusion, {name}, {which} (rows truth, columns the family read at "
                       f"{SURE} or more):\n")
            out.append(confusion(part, which))
    for name, kinds in (("renders (synthetic and recorded)", ("synthetic", "recorded")),
                        ("real clips", ("real",))):
        for which in ("before", "after"):
            out.append(f"\nCalibration of genre.confidence, {name}, {which} (outside items are "
                       "never right):\n")
            out.append(calibration([r for r in rows if r["kind"] in kinds], which))
    out.append("\n### Every real clip\n")
    out.append("| clip | truth | family | before | after (alternatives) |")
    out.append("|---|---|---|---|---|")
    for r in sorted((r for r in rows if r["kind"] == "real"), key=lambda r: r["name"]):
        b, a = r["before"], r["after"]
        out.append(f"| {r['name'][:44]} | {(r.get('genre_truth') or '-')[:28]} | {r['family']} | "
                   f"{b.key} {b.confidence:.2f} | {reading(a)} |")
    return "\n".join(out)


def held_out(grid: str) -> str:
    """The shipped model (fitted on the per-style renders and the real clips,
    never on this grid) reading a built-in grid of the generator, defects included."""
    from genre_corpus import grid_items
    from genre_features import measured

    old = main_detector()
    rows = [{**i, "after": detect_genre(**i["inputs"]),
             "before": old(**i["inputs"])}
            for i in measured(grid_items(grid)) if "inputs" in i]
    out = [f"Held out: the `{grid}` grid ({len(rows)} tracks) read by the shipped model.\n"]
    for which in ("before", "after"):
        out.append(f"- {which}: {summary(rows, which)}")
    out.append("\nConfusion, after:\n")
    out.append(confusion(rows, "after"))
    out.append("\nCalibration, after:\n")
    out.append(calibration(rows, "after"))
    return "\n".join(out)


def _cpu(fn, repeat: int = 3) -> float:
    """Least CPU seconds (this process) of `repeat` calls."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def speed() -> str:
    """The groove's added CPU on the `speed` grid's 5-minute track: its reduction
    inside the one short STFT pass, and measure_groove itself, against the
    whole of extract() (one core: parallel=False)."""
    from truth import render_grid

    from trackgrade.engine.decode import decode
    from trackgrade.engine.extract import extract
    from trackgrade.engine.frames import short_freqs, short_reduced, short_stft_hop_s
    from trackgrade.engine.groove import measure_groove
    from trackgrade.engine.groove import short_reductions as groove_reductions
    from trackgrade.engine.rhythm import measure_rhythm
    from trackgrade.engine.rhythm import short_reductions as rhythm_reductions
    from trackgrade.engine.structure import short_reductions as structure_reductions

    out, tracks = render_grid("speed")
    path = out / tracks[0]["file"]
    audio = decode(path.read_bytes(), file_name=path.name, parallel=False)
    rate, x = audio.sample_rate, audio.samples
    freqs, hop = short_freqs(rate), short_stft_hop_s(rate)
    base = rhythm_reductions(freqs) + structure_reductions(freqs, hop)
    without = _cpu(lambda: short_reduced(x, rate, base))
    short = short_reduced(x, rate, base + groove_reductions(freqs))
    with_groove = _cpu(lambda: short_reduced(x, rate, base + groove_reductions(freqs)))
    beats = measure_rhythm(short, audio.duration_s).beat_times
    groove = _cpu(lambda: measure_groove(short, beats))
    total = _cpu(lambda: extract(audio, parallel=False))
    added = max(with_groove - without, 0.0) + groove
    return (f"5-minute track ({audio.duration_s:.0f} s, {path.name}), CPU seconds, best of 3, one core:\n"
            f"- short STFT pass without / with the groove reduction: {without:.3f} / {with_groove:.3f}\n"
            f"- measure_groove: {groove:.4f}\n"
            f"- whole extract(): {total:.3f}; the groove adds {added:.3f} s ({100 * added / total:.1f} %)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-style", type=int, default=8)
    ap.add_argument("--grid")
    ap.add_argument("--speed", action="store_true", help="only the CPU cost on the 5-minute track")
    ap.add_argument("--held-out", metavar="GRID", help="only the shipped model on a built-in grid")
    args = ap.parse_args()
    if args.speed:
        print(speed())
    elif args.held_out:
        print(held_out(args.held_out))
    else:
        print(report(readings(corpus(args.per_style, grid=args.grid))))
