"""trackgrade.signing: the CONTRACT check vector, rotation, clock skew both
ways, a distinct reason per failure, and the Standard Webhooks headers
checked by the off-the-shelf `standardwebhooks` verifier."""

from __future__ import annotations

import base64
import json
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from trackgrade import signing
from trackgrade.signing import SignatureError

VECTOR_SECRET = "whsec_test_secret_123"
VECTOR_T = 1700000000
VECTOR_BODY = b'{"id":"evt_1","type":"analysis.completed","data":{"object":{"id":"an_1"}}}'
VECTOR_V1 = "96ffd04f7af3af3397018e24cea8feff036b9a7ce4bb08847d4acf09d465c05b"


def test_the_contract_check_vector():
    assert signing.signature(VECTOR_SECRET, VECTOR_BODY, VECTOR_T) == VECTOR_V1
    assert signing.sign(VECTOR_SECRET, VECTOR_BODY, VECTOR_T) == f"t={VECTOR_T},v1={VECTOR_V1}"
    event = signing.verify(VECTOR_SECRET, f"t={VECTOR_T},v1={VECTOR_V1}", VECTOR_BODY,
                           now=VECTOR_T)
    assert event["type"] == "analysis.completed"


@pytest.mark.parametrize("skew, ok, reason", [
    (0, True, None), (300, True, None), (-300, True, None),
    (301, False, signing.TIMESTAMP_TOO_OLD), (-301, False, signing.TIMESTAMP_TOO_NEW),
    (86400, False, signing.TIMESTAMP_TOO_OLD), (-3600, False, signing.TIMESTAMP_TOO_NEW),
])
def test_clock_skew_is_rejected_in_both_directions(skew, ok, reason):
    header = signing.sign(VECTOR_SECRET, VECTOR_BODY, VECTOR_T)
    if ok:
        assert signing.verify(VECTOR_SECRET, header, VECTOR_BODY, now=VECTOR_T + skew)
        return
    with pytest.raises(SignatureError) as err:
        signing.verify(VECTOR_SECRET, header, VECTOR_BODY, now=VECTOR_T + skew)
    assert err.value.reason == reason


def test_a_wider_tolerance_accepts_what_the_default_rejects():
    header = signing.sign(VECTOR_SECRET, VECTOR_BODY, VECTOR_T)
    assert signing.verify(VECTOR_SECRET, header, VECTOR_BODY, now=VECTOR_T + 900, tolerance=1000)


@pytest.mark.parametrize("header, reason", [
    ("", signing.MALFORMED_HEADER),
    ("garbage", signing.MALFORMED_HEADER),
    (f"v1={VECTOR_V1}", signing.MALFORMED_HEADER),
    (f"t=17e8,v1={VECTOR_V1}", signing.MALFORMED_HEADER),
    (f"t={VECTOR_T},t={VECTOR_T},v1={VECTOR_V1}", signing.MALFORMED_HEADER),
    (f"t={VECTOR_T}", signing.NO_V1_SIGNATURE),
    (f"t={VECTOR_T},v0={VECTOR_V1}", signing.NO_V1_SIGNATURE),
    (f"t={VECTOR_T},v1={'0' * 64}", signing.SIGNATURE_MISMATCH),
    (f"t={VECTOR_T},v1={VECTOR_V1.upper()}", signing.SIGNATURE_MISMATCH),
    (f"t={VECTOR_T},v1=ÿÿ", signing.SIGNATURE_MISMATCH),
    (f"t={VECTOR_T + 1},v1={VECTOR_V1}", signing.SIGNATURE_MISMATCH),
])
def test_each_failure_has_its_own_reason(header, reason):
    with pytest.raises(SignatureError) as err:
        signing.verify(VECTOR_SECRET, header, VECTOR_BODY, now=VECTOR_T)
    assert err.value.reason == reason and err.value.message


def test_a_changed_or_reserialised_body_does_not_verify():
    header = signing.sign(VECTOR_SECRET, VECTOR_BODY, VECTOR_T)
    reserialised = json.dumps(json.loads(VECTOR_BODY)).encode()   # spaces after ':' and ','
    for body in (reserialised, VECTOR_BODY + b" ", VECTOR_BODY.replace(b"an_1", b"an_2")):
        with pytest.raises(SignatureError) as err:
            signing.verify(VECTOR_SECRET, header, body, now=VECTOR_T)
        assert err.value.reason == signing.SIGNATURE_MISMATCH


def test_rotation_one_v1_per_secret_and_either_secret_verifies():
    old, new = signing.new_secret(), signing.new_secret()
    header = signing.sign([new, old], VECTOR_BODY, VECTOR_T)
    t, entries = signing.parse_header(header)
    assert t == VECTOR_T and len(entries) == 2
    for secret in (old, new, [old, new]):
        assert signing.verify(secret, header, VECTOR_BODY, now=VECTOR_T)
    with pytest.raises(SignatureError):
        signing.verify(signing.new_secret(), header, VECTOR_BODY, now=VECTOR_T)


def test_the_header_name_may_be_included_and_unknown_schemes_are_ignored():
    header = "Service-Signature: " + signing.sign(VECTOR_SECRET, VECTOR_BODY, VECTOR_T)
    assert signing.verify(VECTOR_SECRET, header + ",v2=abc", VECTOR_BODY, now=VECTOR_T)


def test_a_signed_body_that_is_not_json_says_so():
    header = signing.sign(VECTOR_SECRET, b"not json", VECTOR_T)
    with pytest.raises(SignatureError) as err:
        signing.verify(VECTOR_SECRET, header, b"not json", now=VECTOR_T)
    assert err.value.reason == signing.INVALID_BODY


def test_new_secrets_are_whsec_and_base64_of_random_bytes():
    seen = {signing.new_secret() for _ in range(20)}
    assert len(seen) == 20
    for secret in seen:
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret[6:], validate=True)) == 32
    assert len(base64.b64decode(signing.new_secret(24)[6:])) == 24
    assert len(base64.b64decode(signing.new_secret(64)[6:])) == 64
    with pytest.raises(ValueError):
        signing.new_secret(16)


def test_standard_webhooks_headers_pass_the_reference_verifier():
    secret = signing.new_secret()
    headers = signing.standard_headers(secret, "evt_1", VECTOR_T, VECTOR_BODY)
    assert headers["webhook-signature"].startswith("v1,")
    assert signing.verify_standard(secret, headers, VECTOR_BODY, now=VECTOR_T)["id"] == "evt_1"
    # the off-the-shelf Standard Webhooks library, at its own clock: sign with "now"
    import time
    now = int(time.time())
    headers = signing.standard_headers(secret, "evt_1", now, VECTOR_BODY)
    assert Webhook(secret).verify(VECTOR_BODY, headers)["id"] == "evt_1"
    with pytest.raises(WebhookVerificationError):
        Webhook(signing.new_secret()).verify(VECTOR_BODY, headers)
    # and ours accepts what the reference library signs
    theirs = Webhook(secret).sign("evt_2", __import__("datetime").datetime.fromtimestamp(now),
                                  VECTOR_BODY.decode())
    assert signing.verify_standard(secret, {"webhook-id": "evt_2", "webhook-timestamp": str(now),
                                            "webhook-signature": theirs}, VECTOR_BODY)


@pytest.mark.parametrize("change, reason", [
    ({"webhook-id": ""}, signing.MALFORMED_HEADER),
    ({"webhook-timestamp": "soon"}, signing.MALFORMED_HEADER),
    ({"webhook-signature": "v2,abc"}, signing.NO_V1_SIGNATURE),
    ({"webhook-signature": "v1,AAAA"}, signing.SIGNATURE_MISMATCH),
    ({"webhook-id": "evt_other"}, signing.SIGNATURE_MISMATCH),
])
def test_standard_webhooks_failures_have_reasons(change, reason):
    secret = signing.new_secret()
    headers = {**signing.standard_headers(secret, "evt_1", VECTOR_T, VECTOR_BODY), **change}
    with pytest.raises(SignatureError) as err:
        signing.verify_standard(secret, headers, VECTOR_BODY, now=VECTOR_T)
    assert err.value.reason == reason


def test_standard_webhooks_skew_and_rotation():
    old, new = signing.new_secret(), signing.new_secret()
    headers = signing.standard_headers([new, old], "evt_1", VECTOR_T, VECTOR_BODY)
    assert len(headers["webhook-signature"].split()) == 2
    assert signing.verify_standard(old, headers, VECTOR_BODY, now=VECTOR_T)
    for skew, reason in ((301, signing.TIMESTAMP_TOO_OLD), (-301, signing.TIMESTAMP_TOO_NEW)):
        with pytest.raises(SignatureError) as err:
            signing.verify_standard(new, headers, VECTOR_BODY, now=VECTOR_T + skew)
        assert err.value.reason == reason


@pytest.mark.parametrize("tolerance", [float("nan"), float("inf"), -float("inf"), -1, "soon"])
def test_a_tolerance_that_is_not_a_finite_number_of_seconds_is_refused(tolerance):
    """verify(tolerance=nan) used to accept a 3-year-old signature."""
    secret = signing.new_secret()
    body = b'{"id":"evt_1"}'
    t = int(time.time()) - 3 * 365 * 86400
    with pytest.raises(ValueError, match="tolerance"):
        signing.verify(secret, signing.sign(secret, body, t), body, tolerance=tolerance)
    with pytest.raises(ValueError, match="tolerance"):
        signing.verify_standard(secret, signing.standard_headers(secret, "evt_1", t, body), body,
                                tolerance=tolerance)
