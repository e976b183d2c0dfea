"""What each streaming platform's loudness normalisation does to a master.

`PLATFORMS` is the one table of the platforms' published rules (the README
cites each source): the reference level of its default setting (integrated
loudness, ITU-R BS.1770), whether quiet tracks are turned up as well as loud
ones down, and how far up: the true-peak ceiling a raised track may reach
(Spotify: "we leave 1 dB headroom", so -1 dBTP). A platform that does not
normalise has no reference level.
"""

from __future__ import annotations

from dataclasses import dataclass

from trackgrade.model import PlatformGain

OUTCOMES = ("turned_down", "unchanged", "turned_up", "turned_up_limited")


@dataclass(frozen=True)
class Platform:
    key: str
    name: str
    reference_lufs: float | None     # None: no loudness normalisation
    turns_up: bool                   # quiet tracks raised too (else: turned down only)
    peak_ceiling_dbtp: float | None  # a raised track's true peak stays at or below this
    source: str                      # the published documentation


PLATFORMS = (
    Platform("spotify", "Spotify", -14.0, True, -1.0,
             "https://support.spotify.com/us/artists/article/loudness-normalization/"),
    Platform("apple_music", "Apple Music", -16.0, True, -1.0,
             "https://www.apple.com/apple-music/apple-digital-masters/docs/apple-digital-masters.pdf"),
    Platform("youtube", "YouTube", -14.0, False, None,
             "https://productionadvice.co.uk/youtube-music/"),
    Platform("tidal", "Tidal", -14.0, False, None,
             "https://meterplugs.com/blog/2016/10/07/tidal-adds-loudness-normalization.html"),
    Platform("amazon_music", "Amazon Music", -14.0, False, None,
             "https://www.sageaudio.com/blog/mastering/mastering-for-streaming-platform-loudness-and-normalization-explained.php"),
    Platform("deezer", "Deezer", -15.0, False, None,
             "https://blog.wavedisco.com/blog/streaming-loudness-targets"),
    Platform("soundcloud", "SoundCloud", None, False, None,
             "https://www.sageaudio.com/blog/mastering/mastering-for-streaming-platform-loudness-and-normalization-explained.php"),
)
PLATFORM_NAMES = {p.key: p.name for p in PLATFORMS}
# (name, reference LUFS) of every platform that normalises
STREAMING_LUFS = tuple((p.name, p.reference_lufs) for p in PLATFORMS if p.reference_lufs is not None)
# display names of the codecs of the preview (engine.codecs.CODECS)
CODEC_NAMES = {"mp3": "MP3", "aac": "AAC", "opus": "Opus"}


def platform_gain(platform: Platform, loudness_lufs: float, true_peak_dbtp: float) -> PlatformGain:
    """The gain `platform` applies to a track of this integrated loudness and
    true peak, the true peak after it, and what happened (OUTCOMES)."""
    gain, outcome = 0.0, "unchanged"
    if platform.reference_lufs is not None:
        wanted = round(platform.reference_lufs - loudness_lufs, 1)
        if wanted < 0:
            gain, outcome = wanted, "turned_down"
        elif wanted > 0 and platform.turns_up:
            room = (float("inf") if platform.peak_ceiling_dbtp is None
                    else round(platform.peak_ceiling_dbtp - true_peak_dbtp, 1))
            if wanted <= room:
                gain, outcome = wanted, "turned_up"
            elif room > 0:
                gain, outcome = room, "turned_up_limited"
    return PlatformGain(platform=platform.key, reference_lufs=platform.reference_lufs,
                        gain_db=gain + 0.0, peak_after_gain_dbtp=round(true_peak_dbtp + gain, 1) + 0.0,
                        outcome=outcome)


def platform_gains(loudness_lufs: float, true_peak_dbtp: float) -> tuple[PlatformGain, ...]:
    """Every platform of `PLATFORMS`, in order."""
    return tuple(platform_gain(p, loudness_lufs, true_peak_dbtp) for p in PLATFORMS)
