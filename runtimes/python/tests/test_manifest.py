"""runtime.toml says what the launcher does: the same models, knobs and defaults.

A default may be a number or an expression of `cores` (the grammar iolab's
`crates/lab/src/targets/expr.rs` reads: numbers, `cores`, + - * /, min, max,
clamp); the launcher must compute the same value for any number of cores.
"""

import tomllib

from conftest import HERE
from iolab_py.models import MODELS, defaults


def manifest_value(value, cores):
    """A manifest default for a machine of `cores` cores."""
    if not isinstance(value, str):
        return value
    names = {
        "cores": cores,
        "min": min,
        "max": max,
        "clamp": lambda x, lo, hi: max(lo, min(x, hi)),
    }
    return eval(value, {"__builtins__": {}}, names)  # the manifest is ours, not input


def test_manifest_matches_the_launcher():
    manifest = tomllib.loads((HERE / "runtime.toml").read_text())
    assert manifest["name"] == "python" and manifest["kind"] == "http"
    assert list(manifest["models"]) == list(MODELS)
    for name, spec in manifest["models"].items():
        assert sorted(spec["knobs"]) == sorted(MODELS[name].knobs), name
        for knob, value in spec.get("defaults", {}).items():
            if knob not in MODELS[name].knobs:
                # A fact of the runtime for predictions, not a flag: uvicorn runs one event
                # loop thread per process.
                assert (knob, value) == ("workers", 1) and name.startswith("loop-"), (name, knob)
                continue
            for cores in (1, 2, 3, 64):
                assert defaults(name, cores)[knob] == manifest_value(value, cores), (
                    name,
                    knob,
                    cores,
                )


def test_core_dependent_defaults():
    assert defaults("prefork", 2)["processes"] == 5
    assert defaults("pool", 2)["threads"] == 8
    assert defaults("loop-offload", 2)["offload"] == 6
    assert defaults("loop-offload", 64)["offload"] == 32
