"""One reading of Retry-After (trackgrade/retry_after.py) for the client and
the webhook sender: the rules used to differ (the sender refused "1.5" and
dates without a zone, the client read "-3" as 0)."""

from __future__ import annotations

import pytest

from trackgrade.client.errors import APIError
from trackgrade.retry_after import parse_retry_after

DATE = "Wed, 21 Oct 2015 07:28:00 GMT"
AT = 1445412480                      # that date as Unix time


@pytest.mark.parametrize("value, expected", [
    ("120", 120.0), (" 7 ", 7.0), ("0", 0.0), ("1.5", 1.5),
    (DATE, 60.0), ("Wed, 21 Oct 2015 07:28:00 -0000", 60.0),     # no zone: GMT
    ("Wed, 21 Oct 2015 07:20:00 GMT", 0.0),                       # in the past
    (None, None), ("", None), ("whenever", None), ("-3", None), ("nan", None), ("inf", None),
])
def test_seconds_or_an_http_date(value, expected):
    assert parse_retry_after(value, AT - 60) == expected


def test_the_client_and_the_webhook_sender_read_it_alike():
    from trackgrade.server.webhooks import sender

    assert sender.parse_retry_after is parse_retry_after
    error = APIError("slow down", status=429, headers={"retry-after": "1.5"})
    assert error.retry_after == 1.5
