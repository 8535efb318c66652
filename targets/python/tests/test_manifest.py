"""runtime.toml says what the launcher does: the same models, knobs and static defaults."""

import tomllib

from conftest import HERE
from iolab_py.models import MODELS, defaults


def test_manifest_matches_the_launcher():
    manifest = tomllib.loads((HERE / "runtime.toml").read_text())
    assert manifest["name"] == "python" and manifest["kind"] == "http"
    assert list(manifest["models"]) == list(MODELS)
    for name, spec in manifest["models"].items():
        assert sorted(spec["knobs"]) == sorted(MODELS[name].knobs), name
        for knob, value in spec.get("defaults", {}).items():
            assert defaults(name, 2)[knob] == value == defaults(name, 64)[knob], (name, knob)


def test_core_dependent_defaults():
    assert defaults("prefork", 2)["processes"] == 5
    assert defaults("pool", 2)["threads"] == 8
    assert defaults("loop-offload", 2)["offload"] == 6
    assert defaults("loop-offload", 64)["offload"] == 32
