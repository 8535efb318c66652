"""The cpu step: N terms of the Leibniz series for pi (crates/model/src/cpu.rs), in plain
Python on purpose: the loop holds the GIL throughout, as any pure-Python work does, so threads
of one process take turns at it while processes compute in parallel."""


def leibniz(terms: int) -> float:
    acc = 0.0
    sign = 4.0
    for i in range(terms):
        acc += sign / (2 * i + 1)
        sign = -sign
    return acc
