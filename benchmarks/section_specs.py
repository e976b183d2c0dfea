"""Full-length synthetic tracks with known sections (the shared generator's
style templates), for the section-label agreement in eval_sections.py."""

SPECS = [{"name": f"sec_{style}", "style": style, "bpm": bpm, "key": "A", "scale": "minor",
          "seconds": seconds, "seed": 11 + i}
         for i, (style, bpm, seconds) in enumerate([
             ("house", 124, 150), ("techno", 130, 150), ("trance", 138, 150),
             ("dubstep", 140, 120), ("drum_and_bass", 174, 120), ("breakbeat", 132, 120),
             ("deep_house", 120, 150), ("hardstyle", 150, 120)])]
