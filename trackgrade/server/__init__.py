"""The `trackgrade serve` HTTP service: app factory, store, accounts, admin."""
