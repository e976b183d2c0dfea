"""Signal -> numbers: decode, frames, loudness, dynamics, stereo, spectrum, rhythm, tonal, structure, extract."""
