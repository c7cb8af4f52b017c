"""The stop check: asked before every decoder pass of every strategy; True abandons the batch."""

from __future__ import annotations

import pytest

from service.engine.decoding.params import DecodeParams
from service.engine.engine import STRATEGIES, DecodingStoppedError
from tests.engine.conftest import SENTENCES, engine_for


class StopAfter:
    """Says stop once it has been asked ``passes + 1`` times (the encoder check, then one per pass)."""

    def __init__(self, passes: int) -> None:
        self.passes = passes
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked > self.passes + 1


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_every_strategy_stops_between_passes(strategy: str) -> None:
    engine = engine_for()
    sources = [s for s in engine.codec.encode_batch(SENTENCES) if s]
    # pass_cost=0: one decoder run per pass (a split pass asks before each of its runs)
    params = DecodeParams(num_beams=3, num_return_sequences=2, seed=1, max_new_tokens=30, pass_cost=0)
    never = StopAfter(10_000)
    finished = engine.generate(sources, strategy, params, stop=never)
    passes = max(result.passes for result in finished)
    assert never.asked == passes + 1  # asked before encoding and before every pass, nothing more
    assert [r.tokens for r in finished] == [r.tokens for r in engine.generate(sources, strategy, params)]
    stop = StopAfter(2)
    with pytest.raises(DecodingStoppedError, match="after 2 decoder passes"):
        engine.generate(sources, strategy, params, stop=stop)
    with pytest.raises(DecodingStoppedError, match="before encoding"):
        engine.generate(sources, strategy, params, stop=lambda: True)
