"""The engine's diverse beam search against ``transformers`` 4.55's own ``_group_beam_search``, token for token.

    pip install --no-deps --target /tmp/hf4 transformers==4.55.4 tokenizers==0.21.4 huggingface_hub==0.34.4
    PYTHONPATH=/tmp/hf4:. .venv/bin/python -m tools.check_group_beam --model tests/fixtures/tiny-gec

``transformers`` 5 (the build extra) no longer has group beam search, so ``tests/engine/test_diverse.py`` compares
with a reference written after 4.55's code; this checks the engine against 4.55 itself, on the tiny model's
PyTorch weights (``<model>/hf``) and fp32 graphs: the test's sentences and 12 random sources, over a grid of group
shapes, penalties, length penalties, ways of stopping and length limits. Prints the cases whose hypotheses differ
and the count of identical ones.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForSeq2SeqLM, GenerationConfig

from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine

SENTENCES = [
    "i saw a apple yesterday",
    "The cat likes teh old car.",
    "Tom found an honest owl.",
    "We visited a island last week.",
    "My friend my friend bought a umbrella",
    "She painted the red house. i took the the dog.",
    "Completely unrelated text that the tiny model never saw!",
    "A",
]
GRID = itertools.product(
    [(4, 2), (4, 4), (6, 3), (6, 2)], [0.5, 1.0, 3.0], [0.6, 1.0, 2.0], [False, True, "never"], [5, 11, 40]
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="a model folder with fp32 graphs and hf/")
    args = parser.parse_args(argv)
    if not transformers.__version__.startswith("4."):
        raise SystemExit(f"needs transformers 4.x (group beam search), found {transformers.__version__}")
    torch.set_num_threads(1)
    model = AutoModelForSeq2SeqLM.from_pretrained(str(args.model / "hf")).eval()
    engine = Engine(args.model, variant="fp32")
    m = engine.manifest
    rng = random.Random(0)
    sources = engine.codec.encode_batch(SENTENCES)
    sources += [[rng.randint(4, 399) for _ in range(rng.randint(1, 20))] for _ in range(12)]
    same = total = 0
    for (beams, groups), penalty, length_penalty, early, limit in GRID:
        config = GenerationConfig(
            decoder_start_token_id=m.decoder_prefix_ids[0],
            forced_bos_token_id=m.decoder_prefix_ids[1] if len(m.decoder_prefix_ids) > 1 else None,
            eos_token_id=m.eos_token_id,
            pad_token_id=m.pad_token_id,
            max_new_tokens=limit + len(m.decoder_prefix_ids) - 1,
            num_beams=beams,
            num_beam_groups=groups,
            diversity_penalty=penalty,
            length_penalty=length_penalty,
            early_stopping=early,
            num_return_sequences=beams,
            do_sample=False,
            output_scores=True,
            return_dict_in_generate=True,
        )
        params = DecodeParams(
            num_beams=beams,
            num_beam_groups=groups,
            diversity_penalty=penalty,
            length_penalty=length_penalty,
            early_stopping=early,
            num_return_sequences=beams,
            max_new_tokens=limit,
        )
        for source, result in zip(sources, engine.generate(sources, "beam", params), strict=True):
            ids = torch.tensor([m.source_prefix_ids + source + m.source_suffix_ids])
            with torch.no_grad():
                out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=config)
            expected = []
            for row in out.sequences.tolist():
                row = row[len(m.decoder_prefix_ids) :]
                expected.append(row[: row.index(m.eos_token_id)] if m.eos_token_id in row else row)
            score_gap = max(
                abs(a - h.score) for a, h in zip(out.sequences_scores.tolist(), result.hypotheses, strict=False)
            )
            identical = expected == [h.tokens for h in result.hypotheses] and score_gap < 1e-4
            same, total = same + identical, total + 1
            if not identical:
                print(
                    f"differs: {beams} beams, {groups} groups, penalty {penalty}, length penalty {length_penalty}, "
                    f"early_stopping {early}, limit {limit}, source {source}, score gap {score_gap:.2g}"
                )
    print(f"{same}/{total} identical (transformers {transformers.__version__})")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
