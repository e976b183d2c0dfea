"""`trackgrade admin`: the developer console on a data directory.

Mounted by trackgrade/cli/__init__.py as `trackgrade admin`. Every command
works while `trackgrade serve` runs on the same directory (the store
serialises the two processes; the server sees the change on its next
request). Secrets (API keys, webhook signing secrets) are printed once, at
creation; only a key's hash is stored.

Exit codes: 0 done; 1 the thing named is bad (unknown key, account or
analysis); 2 usage error or unusable data directory. One line on stderr,
never a traceback.

The commands, one module per concern: accounts (keys, credits), webhooks
(endpoints, events), switches (embed, console link, maintenance), store
(migrate, check); common holds the groups, options and the opened store.
"""

from __future__ import annotations

# importing a module registers its commands, in this order (the order of `--help`)
from trackgrade.cli.admin import accounts, webhooks, switches, store  # noqa: F401
from trackgrade.cli.admin.common import app

__all__ = ["app"]
