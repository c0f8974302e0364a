"""The paired bootstrap that retriever evaluate and compare set their rows side by side with."""

from __future__ import annotations

import pytest

from toolbed.stats import paired_bootstrap


def test_a_paired_bootstrap_tells_a_steady_gain_from_noise() -> None:
    steady = paired_bootstrap([1.0] * 40, [0.0] * 30 + [1.0] * 10)    # a wins 30, ties 10
    assert steady.mean == 0.75 and 0 < steady.low <= 0.75 <= steady.high <= 1 and steady.clear
    noise = paired_bootstrap([1.0, 0.0] * 20, [0.0, 1.0] * 20)         # each wins half
    assert noise.mean == 0 and noise.low < 0 < noise.high and not noise.clear
    assert str(noise).startswith("+0.000 [-0.")
    # seeded: the same scores give the same interval, whatever the block size
    assert paired_bootstrap([0.3, 0.9, 0.5], [0.1, 0.2, 0.8], rounds=500) == paired_bootstrap(
        [0.3, 0.9, 0.5], [0.1, 0.2, 0.8], rounds=500)
    with pytest.raises(ValueError, match="one score of each system per item"):
        paired_bootstrap([1.0], [1.0, 0.0])
