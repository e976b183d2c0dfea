"""Schemathesis hooks for fuzzing the server (SCHEMATHESIS_HOOKS=fuzz_hooks).

The upload step is authorised by the upload token a submission returned, not
by the API key: remember each 202's token and hand it to the upload of that
analysis (the OpenAPI link submit -> upload supplies the id), so the upload
is sent with explicit, valid credentials and its auth checks can probe it."""

from __future__ import annotations

import schemathesis

TOKENS: dict[str, str] = {}


@schemathesis.hook
def after_call(context, case, response):
    if case.operation.method.upper() == "POST" and case.operation.path == "/analyses" \
            and response.status_code == 202:
        body = response.json()
        TOKENS[body["id"]] = body["upload"]["token"]


@schemathesis.auth(refresh_interval=None, retry_on=[]).apply_to(operation_id="uploadAudio")
class UploadToken:
    def get(self, case, context):
        return "by-analysis"        # the token is picked per case in `set`

    def set(self, case, data, context):
        analysis_id = str((case.path_parameters or {}).get("analysis_id"))
        token = TOKENS.get(analysis_id, "upt_not_issued")
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}
