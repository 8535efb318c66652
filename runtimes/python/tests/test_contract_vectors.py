"""vectors/contract.json against every model, started through the launcher: once with the
real backends (a case that `needs` one expects its `expect` answer) and once without any (such
a case expects its `unconfigured` answer), judged as `iolab verify` judges them."""

import pytest

from conftest import MODELS, vectors

CASES = vectors("contract.json")["cases"]


def judge(expect: dict, answer, model: str):
    assert answer.status == expect["status"], answer.body[:200]
    if "content_type" in expect:
        assert answer.headers.get("content-type", "").startswith(expect["content_type"])
    for field, want in expect.get("body", {}).items():
        assert answer.json().get(field) == (model if want == "$model" else want), answer.body
    for needle in expect.get("body_contains", []):
        assert needle.encode() in answer.body, answer.body[:200]
    if "min_ms" in expect:
        assert answer.ms >= expect["min_ms"], f"{answer.ms:.1f} ms: the step was not run"
    if "max_ms" in expect:
        assert answer.ms <= expect["max_ms"], f"{answer.ms:.1f} ms"


def check_all(target, configured: bool):
    for case in CASES:
        answer = target.get(case["path"])
        if case.get("needs") and not configured:
            expect = case["unconfigured"]
        elif case.get("needs") and "expect" not in case:
            # Configured, nothing fixed to expect (a key that may be absent): contract-shaped.
            ok = answer.json()["ok"]
            assert (answer.status, ok) == (200, True) or (answer.status >= 400 and not ok)
            continue
        else:
            expect = case["expect"]
        try:
            judge(expect, answer, target.model)
        except AssertionError as e:
            raise AssertionError(f"case {case['name']}: {e}") from None


@pytest.mark.parametrize("model", MODELS)
def test_contract_with_backends(targets, backends, model):
    check_all(targets(model), configured=True)


@pytest.mark.parametrize("model", MODELS)
def test_contract_without_backends(targets, model):
    t = targets(model, backends=False)
    check_all(t, configured=False)
    targets.stop(t)
