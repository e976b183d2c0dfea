"""What a header says (`AudioInfo`), where raw samples sit (`_Layout`), and the
container names used in messages."""

from __future__ import annotations

from dataclasses import dataclass


CONTAINER_NAMES = {
    "wav": "WAV", "aiff": "AIFF", "flac": "FLAC", "mp3": "MP3",
    "ogg": "Ogg", "ogg_vorbis": "Ogg Vorbis", "ogg_opus": "Ogg Opus", "ogg_flac": "Ogg FLAC",
    "ogg_speex": "Ogg Speex", "webm": "WebM", "matroska": "Matroska (MKA/MKV)",
    "mp4": "MP4/M4A (AAC or ALAC)", "3gp": "3GP (MP4 family)", "quicktime": "QuickTime (MOV)",
    "aac": "AAC (ADTS)", "caf": "Core Audio (CAF)", "au": "Sun/NeXT AU", "amr": "AMR",
    "wavpack": "WavPack", "ape": "Monkey's Audio", "tta": "TTA", "asf": "WMA/ASF",
    "musepack": "Musepack", "dsf": "DSD (DSF)", "dff": "DSD (DFF)", "midi": "MIDI",
    "8svx": "IFF 8SVX", "pdf": "a PDF document", "png": "a PNG image", "jpeg": "a JPEG image",
    "gif": "a GIF image", "zip": "a ZIP archive", "gzip": "a gzip archive", "avi": "AVI video",
}
ACCEPTED_CONTAINERS = ("wav", "aiff", "flac", "mp3")


@dataclass(frozen=True)
class AudioInfo:
    """What the header says, validated against every header-level rule."""
    container: str                      # "wav", "aiff", "flac", "mp3"
    sample_rate: int
    channels: int
    frames: int | None                  # WAV/AIFF: frames present; FLAC: STREAMINFO total;
                                        # MP3: tag or frame-walk count; None when unknown
    declared_duration_s: float | None   # what the header claims, when it claims anything
    subtype: str                        # soundfile-style: PCM_16, FLOAT, MPEG_LAYER_III...

    @property
    def truncated(self) -> bool:
        return (self.frames is not None and self.declared_duration_s is not None
                and self.frames / self.sample_rate < self.declared_duration_s - 1e-9)


@dataclass(frozen=True)
class _Layout:
    """Where the raw samples are, for the numpy path (uncompressed WAV/AIFF)."""
    offset: int
    nbytes: int            # bytes present for whole frames
    dtype: str             # numpy dtype of one stored sample, e.g. "<i2", ">f4", "u1", "<i3"
    block_align: int
