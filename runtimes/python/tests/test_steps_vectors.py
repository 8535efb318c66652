"""vectors/steps.json against the Python parser: canonical text, leaf count, exact errors."""

import pytest

from conftest import vectors
from iolab_py import steps

CASES = vectors("steps.json")["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["input"][:40] or "<empty>" for c in CASES])
def test_steps_vector(case):
    if "error" in case:
        with pytest.raises(steps.StepsError) as e:
            steps.parse(case["input"])
        assert str(e.value) == case["error"]
    else:
        step = steps.parse(case["input"])
        assert steps.canonical(step) == case["canonical"]
        assert steps.leaf_count(step) == case["leaves"]
        assert steps.parse(steps.canonical(step)) == step


def test_limits_and_rounding():
    assert "more than 1000 steps" in str(pytest.raises(
        steps.StepsError, steps.parse, ",".join(["sleep:1"] * 1001)).value)
    assert steps.parse("sleep:0.0005").micros == 1  # halves round away from zero, as Rust's
    assert steps.canonical(steps.parse("http:12.125")) == "http:12.125"
    assert "unexpected 'é'" in str(pytest.raises(steps.StepsError, steps.parse, "sleep:1é").value)
