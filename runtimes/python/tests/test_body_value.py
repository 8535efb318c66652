"""`&body=value` on every model: the 1,024,000-byte value E4 fetches, answered as the exact
bytes memcached holds (octet-stream), the last mc step's in written order; a miss is a 502."""

import os

import pymemcache
import pytest

from conftest import MODELS

SIZE = 1_024_000


@pytest.fixture(scope="module")
def stored(backends):
    host, _, port = backends["IOLAB_MC"].rpartition(":")
    client = pymemcache.Client((host, int(port)))
    big = os.urandom(SIZE)
    key, small = f"iolab-py-test-{os.getpid()}", b"small value"
    client.set(key, big)
    client.set(key + "-small", small)
    yield key, big, small
    client.delete(key)
    client.delete(key + "-small")
    client.close()


@pytest.mark.parametrize("model", MODELS)
def test_body_value(targets, stored, model):
    key, big, small = stored
    t = targets(model)
    a = t.get(f"/work?steps=mc:{key}&body=value")
    assert a.status == 200, a.body[:200]
    assert a.headers["content-type"] == "application/octet-stream"
    assert a.body == big
    # The last mc step in written order wins, in seq and in par alike.
    assert t.get(f"/work?steps=seq(mc:{key},mc:{key}-small)&body=value").body == small
    assert t.get(f"/work?steps=par(mc:{key}-small,sleep:5,mc:{key})&body=value").body == big
    miss = t.get(f"/work?steps=mc:{key}-absent&body=value")
    assert miss.status == 502 and b"not found" in miss.body
    assert miss.headers["content-type"] == "application/json"
