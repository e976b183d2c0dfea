"""Regenerate the README's pictures of the developer console from a real run:
a real server (test mode, a few analyses, a badge on, a webhook endpoint), a
real headless Chromium signed in by a one-time link.

    python docs/gen_console_png.py      writes docs/console.png (1100 px wide)
                                        and docs/console-mobile.png (390 px)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NAMES = ("night_drive_v4.wav", "warehouse_roller.wav", "sunrise_edit.wav", "amen_sketch.wav")


def viewport_png(page, path: Path, width: int, height: int) -> None:
    page.call("Emulation.setDeviceMetricsOverride",
              {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500})
    page.settle(0.3)
    page.screenshot(path, full_page=False)


def main() -> None:
    from tests.browser import Browser
    from tests.server.server_harness import start
    from trackgrade.server import admin
    from trackgrade.server.clock import SystemClock

    server = start(clock=SystemClock(), test_in_flight=20)
    try:
        key, account = server.key("test")
        done = []
        for name in NAMES:
            accepted = server.submit(key, file_name=name).json
            server.upload(accepted, b"x")
            done.append(server.wait(accepted["id"], key,
                                    until=lambda d: d["diagnosis_status"] == "ready"))
        server.submit(key, file_name="late_night_bounce.wav")          # awaits its bytes
        admin.set_embed(server.store, done[-1]["id"], True)
        admin.add_webhook(server.store, "https://hooks.example.org/trackgrade", account)
        with Browser() as browser:
            page = browser.open(admin.console_link(server.store, account, server.url)["url"],
                                width=1100, height=700)
            page.navigate(server.url + "/console/analyses?mode=test")
            viewport_png(page, ROOT / "docs" / "console.png", 1100, 700)
            page.navigate(server.url + "/console/keys")
            page.click("#create button[type=submit]")
            viewport_png(page, ROOT / "docs" / "console-mobile.png", 390, 760)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
