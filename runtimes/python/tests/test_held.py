"""iolab_py/held.py: the /events interval is read as iolab reads durations (crates/model
units.rs), and an event is the contract's bytes."""

import json
import time

from iolab_py import held
from iolab_py.route import param


def test_durations_as_iolab_writes_them():
    assert held.duration_s("100ms") == 0.1
    assert held.duration_s("1m30s") == 90
    assert held.duration_s("2min") == 120
    assert held.duration_s("250us") == 0.00025
    for bad in ["", "100", "ms", "1x", "1 s", "1mins", "200h"]:
        assert held.duration_s(bad) is None, bad
    assert held.every_s("every=50ms", param) == 0.05
    assert held.every_s("every=0s", param) == held.MIN_EVERY_S
    assert held.every_s("every=%zz", param) == held.EVERY_S
    assert held.every_s("", param) == held.EVERY_S


def test_an_event_is_numbered_and_stamped_in_microseconds():
    text = held.event(7).decode()
    assert text.startswith("id: 7\ndata: ") and text.endswith("\n\n")
    data = json.loads(text.split("data: ", 1)[1])
    assert data["seq"] == 7
    assert abs(data["sent_unix_us"] - time.time() * 1e6) < 5e6
