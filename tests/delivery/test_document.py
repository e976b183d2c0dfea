"""`delivery` in the document: validated, rebuilt from JSON (what `remote get`
draws), drawn on the terminal, absent from documents of older versions."""

import io
import json

from rich.console import Console

from trackgrade.cli.render import render_analysis
from tests.document_check import validate_document
from trackgrade.model_read import analysis_from_dict
from trackgrade.testmode import canned_analysis


def text_of(renderable) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_a_served_document_rebuilds_with_its_delivery_and_draws_it():
    a = canned_analysis("kick.wav", "master", codec_preview=True)
    doc = json.loads(json.dumps(a.to_dict()))
    assert validate_document(doc) == []
    again = analysis_from_dict(doc)
    assert again.delivery == a.delivery and again.frequency.levels_db == a.frequency.levels_db
    screen = text_of(render_analysis(again))
    assert "Streaming" in screen and "Deezer" in screen and "Codecs" in screen and "MP3" in screen
    verbose = text_of(render_analysis(again, verbose=True))
    assert "Streaming platforms" in verbose and "SoundCloud" in verbose and "Codec preview" in verbose


def test_a_document_from_before_the_delivery_checks_still_draws():
    doc = canned_analysis("kick.wav", "master").to_dict()
    del doc["delivery"]
    del doc["frequency"]["levels_db"]
    old = analysis_from_dict(doc)
    assert old.delivery is None
    assert "Streaming" not in text_of(render_analysis(old))


def test_test_mode_delivery_is_plausible_and_codecs_only_when_asked():
    a = canned_analysis("club_edit.flac", "master")
    assert a.delivery.codecs is None
    assert [p.platform for p in a.delivery.platforms][-1] == "soundcloud"
    bands = a.delivery.mono.bands
    assert bands.sub_bass.mono_loss_db <= bands.air.mono_loss_db   # the low end is the narrowest
    previewed = canned_analysis("club_edit.flac", "master", codec_preview=True).delivery.codecs
    assert [c.codec for c in previewed] == ["mp3", "aac", "opus"]
    assert all(c.true_peak_rise_db > 0 for c in previewed)
