"""Schemathesis hooks for fuzzing the server (SCHEMATHESIS_HOOKS=fuzz_hooks).

The upload step is authorised by the upload token a submission returned, not
by the API key: remember each 202's token and send it with the upload of that
analysis (the OpenAPI link submit -> upload supplies the id), marked as
explicit credentials so the auth checks probe it (without it and with a wrong
token) instead of taking a valid token for a generated one."""

from __future__ import annotations

import schemathesis

TOKENS: dict[str, str] = {}


@schemathesis.hook
def after_call(context, case, response):
    if case.operation.method.upper() == "POST" and case.operation.path == "/analyses" \
            and response.status_code == 202:
        body = response.json()
        TOKENS[body["id"]] = body["upload"]["token"]


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.operation.method.upper() == "POST" and case.operation.path.startswith("/uploads/"):
        analysis_id = str((case.path_parameters or {}).get("analysis_id"))
        token = TOKENS.get(analysis_id, "upt_not_issued")
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}
        case._has_explicit_auth = True
