"""`$IOLAB_BIN verify --held` (the contract gate, with PostgreSQL, memcached and the delay
service, and GET /ws and /events) against every model started through the launcher, then
SIGTERM: exit 0 within 10 s."""

import subprocess

import pytest

from conftest import MODELS


@pytest.mark.parametrize("model", MODELS)
def test_iolab_verify_then_sigterm(targets, backends, iolab_bin, model):
    t = targets(model)
    r = subprocess.run([iolab_bin, "verify", t.url, "--model", model, "--held",
                        "--pg", backends["IOLAB_PG"], "--mc", backends["IOLAB_MC"],
                        "--http-backend", backends["IOLAB_HTTP_BACKEND"]],
                       capture_output=True, text=True, timeout=180)
    print(r.stdout)
    assert r.returncode == 0, f"iolab verify failed for {model}:\n{r.stdout}\n{r.stderr}"
    code, took = targets.stop(t)
    assert code == 0 and took < 10, f"SIGTERM: exit {code} after {took:.1f} s\n{t.log()}"
