"""Webhook delivery: every outbox event to every enabled endpoint of its
account, signed, retried on the CONTRACT schedule, surviving restarts.

    schedule.py    when to try again (schedule, jitter, Retry-After)
    sender.py      the WebhookSender seam and the real HttpSender (a total
                   deadline per attempt)
    state.py       delivery state as store records; `claim_due`, the one
                   place that picks work
    slots.py       which claimed attempt starts next: fair shares between
                   accounts, then endpoints
    dispatcher.py  the loop and the bounded sender pool
    endpoints.py   add / list / remove / rotate endpoints, resend events

    from trackgrade.server.webhooks import Dispatcher, HttpSender
    dispatcher = Dispatcher(store, clock, HttpSender())
    dispatcher.start()
"""

from trackgrade.server.webhooks.dispatcher import DispatchOptions, Dispatcher, signed_headers
from trackgrade.server.webhooks.schedule import DEFAULT_SCHEDULE, parse_schedule
from trackgrade.server.webhooks.sender import HttpSender, SendResult, WebhookSender

__all__ = ["DEFAULT_SCHEDULE", "DispatchOptions", "Dispatcher", "HttpSender", "SendResult",
           "WebhookSender", "parse_schedule", "signed_headers"]
