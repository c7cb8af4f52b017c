"""``gecserve export`` on small T5 checkpoints made here, with the ReLU (T5) and the gated-GELU (T5 v1.1, FLAN)
feed-forward: the exported graphs against PyTorch, however the decoder's passes are cut; the engine's greedy
decoding against ``transformers``; aggressive decoding against greedy, token for token.

A random T5 repeats one token whatever its input, which leaves aggressive decoding nothing to verify in blocks,
so each checkpoint is first trained for a few seconds to copy its input: it then copies in part, and its drafts
are accepted several tokens per pass and rejected in the middle.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="build extra (torch) not installed")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tokenizers import SentencePieceUnigramTokenizer  # noqa: E402
from transformers import T5Config, T5ForConditionalGeneration, T5Tokenizer  # noqa: E402

from models.export.exporter import export  # noqa: E402
from models.export.t5 import scales_output  # noqa: E402
from models.export.verify import check_logits, greedy_agreement  # noqa: E402
from models.fixture import clean_sentence, corrupt  # noqa: E402
from service.engine.decoding.params import DecodeParams  # noqa: E402
from service.engine.engine import Engine  # noqa: E402
from service.engine.manifest import ModelManifest  # noqa: E402
from tests.models.export.test_exporter import SAMPLES  # noqa: E402

VARIANTS = {
    # T5: ReLU, output embedding tied to the input one, so the decoder output is scaled by d_model ** -0.5
    "relu": {"feed_forward_proj": "relu", "tie_word_embeddings": True},
    # T5 v1.1 / FLAN: gated GELU, no output scaling, and heads x d_kv that is not d_model (FLAN-T5 small: 6 x 64 in 512)
    "gated": {"feed_forward_proj": "gated-gelu", "tie_word_embeddings": False, "num_heads": 3, "d_kv": 12},
}
BUCKETS, MAX_DISTANCE = 8, 16  # few buckets, and a distance the test sentences pass
TOLERANCE = 1e-4
# passes of other widths sum attention in another order than one full pass: float32's error grows with the logit
# (CI drew a case 1.00017e-4 off on a logit near 8); a wrong bias or cache entry is off by 1e-2 and more
SPLIT_RTOL = 2e-5


def _sentences(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [corrupt(clean_sentence(rng), rng) for _ in range(count)]


TRAINING = _sentences(0, 500)
SENTENCES = [
    *SAMPLES,
    *_sentences(1, 12),
    "The teacher found the old book. My sister ate an apple in the morning. Tom has a red car near the river.",
]


def _tokenizer(path: Path) -> T5Tokenizer:
    """A SentencePiece (unigram) vocabulary of the test sentences, as a T5 tokenizer: ``<pad>`` 0, ``</s>`` 1,
    ``<unk>`` 2, and ``</s>`` after every source; saved in ``path`` (``tokenizer.json`` among its files)."""
    unigram = SentencePieceUnigramTokenizer()
    unigram.train_from_iterator(
        TRAINING, vocab_size=200, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>", show_progress=False
    )
    vocabulary = [(piece, score) for piece, score in json.loads(unigram.to_str())["model"]["vocab"]]
    tokenizer = T5Tokenizer(vocab=vocabulary, extra_ids=0)
    tokenizer.save_pretrained(path)
    return tokenizer


def _checkpoint(variant: str, path: Path, steps: int = 100) -> T5ForConditionalGeneration:
    """A 3+2-layer d32 T5, randomly initialised, then trained ``steps`` steps to copy sentences; saved in ``path``."""
    tokenizer = _tokenizer(path)
    torch.manual_seed(0)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_ff=64,
        num_layers=3,
        num_decoder_layers=2,
        relative_attention_num_buckets=BUCKETS,
        relative_attention_max_distance=MAX_DISTANCE,
        dropout_rate=0.0,
        decoder_start_token_id=0,
        **{"num_heads": 4, "d_kv": 8, **VARIANTS[variant]},
    )
    model = T5ForConditionalGeneration(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-2)
    rng = random.Random(0)
    model.train()
    for _ in range(steps):
        batch = tokenizer(rng.sample(TRAINING, 32), padding=True, return_tensors="pt")
        labels = batch.input_ids.masked_fill(batch.attention_mask == 0, -100)
        loss = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval().save_pretrained(path)
    return model


class Exported:
    """A T5 checkpoint, its export and engines over it (one per cache layout)."""

    def __init__(self, variant: str, root: Path) -> None:
        self.variant = variant
        self.model = _checkpoint(variant, root / "hf")
        self.manifest = export(root / "hf", root / "out", samples=SAMPLES)
        self.engines = {cache: Engine(root / "out", variant="fp32", cache=cache) for cache in ("compact", "masked")}

    @property
    def engine(self) -> Engine:
        return self.engines["compact"]


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def t5(request, tmp_path_factory) -> Exported:
    return Exported(request.param, tmp_path_factory.mktemp(f"t5-{request.param}"))


def test_export_verifies_and_describes_t5(t5: Exported) -> None:
    manifest = ModelManifest.load(t5.engine.model.model_dir)
    report = manifest.verification["fp32"]
    assert report["logits_max_abs_diff"] < TOLERANCE
    assert report["greedy_identical"] == report["greedy_total"] == len(SAMPLES)
    assert manifest.family == "t5"
    assert manifest.decoder_prefix_ids == [0]  # T5 starts decoding from its pad token
    assert (manifest.pad_token_id, manifest.eos_token_id) == (0, 1)
    assert (manifest.source_prefix_ids, manifest.source_suffix_ids) == ([], [1])
    # the engine's cache holds heads of d_kv, which need not be d_model / heads (the gated variant's 3 x 12 in 32)
    assert manifest.head_dim == manifest.architecture["head_dim"] == t5.model.config.d_kv
    assert manifest.decoder_heads == t5.model.config.num_heads
    assert manifest.architecture["decoder_layers"] == 2 and manifest.architecture["encoder_layers"] == 3
    assert manifest.architecture["activation"] == VARIANTS[t5.variant]["feed_forward_proj"]
    assert scales_output(t5.model.config) == VARIANTS[t5.variant]["tie_word_embeddings"]


def test_logits_match_pytorch_past_the_bucket_distance(t5: Exported) -> None:
    """Sources and targets longer than ``relative_attention_max_distance``: the far buckets, full and split passes."""
    sources = t5.engine.codec.encode_batch(SENTENCES)
    target = max(sources, key=len)
    assert len(target) > 2 * MAX_DISTANCE
    check = check_logits(t5.model, t5.engine, sources, [target] * len(sources))
    assert check.worst < TOLERANCE


def _reference(t5: Exported, sources: list[list[int]], targets: np.ndarray) -> np.ndarray:
    m = t5.manifest
    rows = [m.source_prefix_ids + s + m.source_suffix_ids for s in sources]
    ids = np.full((len(rows), max(map(len, rows))), m.pad_token_id, dtype=np.int64)
    mask = np.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)], mask[i, : len(row)] = row, 1
    with torch.no_grad():
        return t5.model(
            input_ids=torch.from_numpy(ids),
            attention_mask=torch.from_numpy(mask),
            decoder_input_ids=torch.from_numpy(targets),
        ).logits.numpy()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), cache=st.sampled_from(["compact", "masked"]), batch=st.integers(1, 3))
def test_decoder_passes_of_any_width_match_pytorch(t5: Exported, data, cache: str, batch: int) -> None:
    """Each row of a batch advances through its target by passes of its own width (each row's bias is for its own
    positions past its own cache length), now and then after a rejected draft that is fed and rolled back (holes in
    the masked cache); every logit equals PyTorch's one full pass."""
    vocab = t5.manifest.architecture["vocab_size"]
    token = st.integers(3, vocab - 1)
    sources = [data.draw(st.lists(token, min_size=1, max_size=30)) for _ in range(batch)]
    length = data.draw(st.integers(1, 28))
    targets = np.array(
        [
            t5.manifest.decoder_prefix_ids + data.draw(st.lists(token, min_size=length - 1, max_size=length - 1))
            for _ in range(batch)
        ],
        dtype=np.int64,
    )
    reference = _reference(t5, sources, targets)
    state = t5.engines[cache].model.start(sources)
    got = np.zeros_like(reference)
    done = np.zeros(batch, dtype=np.int64)
    while (done < length).any():
        widths = np.array([data.draw(st.integers(1, length - d)) if d < length else 0 for d in done])
        if data.draw(st.booleans()):  # a draft that verification rejects: its entries are rolled back
            wrong = np.array(
                [
                    data.draw(st.lists(token, min_size=int(widths.max()), max_size=int(widths.max())))
                    for _ in range(batch)
                ]
            )
            state.step(wrong, widths)
            state.truncate(done)
        tokens = np.full((batch, int(widths.max())), t5.manifest.pad_token_id, dtype=np.int64)
        for row, (start, width) in enumerate(zip(done, widths, strict=True)):
            tokens[row, :width] = targets[row, start : start + width]
        logits = state.step(tokens, widths)
        for row, (start, width) in enumerate(zip(done, widths, strict=True)):
            got[row, start : start + width] = logits[row, :width]
        done = done + widths
        assert np.array_equal(state.lengths, done)
    np.testing.assert_allclose(got, reference, rtol=SPLIT_RTOL, atol=TOLERANCE)


def test_engine_greedy_equals_transformers(t5: Exported) -> None:
    sources = t5.engine.codec.encode_batch(SENTENCES)
    same, total, differ = greedy_agreement(t5.model, t5.engine, sources)
    assert same == total and not differ


def _echoes(engine: Engine, sources: list[list[int]]) -> list[list[int]]:
    """The model's greedy outputs as sources: it copies its own output in long runs."""
    return [r.tokens[: engine.max_source_tokens] for r in engine.generate(sources, "greedy")]


def test_aggressive_decoding_verifies_drafts_in_blocks(t5: Exported) -> None:
    """Many passes accept several draft tokens (up to a whole draft), and aggressive decoding equals greedy."""
    sentences = t5.engine.codec.encode_batch(SENTENCES)
    sources = sentences + _echoes(t5.engine, sentences)
    greedy = t5.engine.generate(sources, "greedy")
    for engine in t5.engines.values():
        aggressive = engine.generate(sources, "aggressive")
        assert [r.tokens for r in aggressive] == [r.tokens for r in greedy]
        blocks = [n for r in aggressive for n in r.accepted]
        assert sum(n >= 2 for n in blocks) >= 20
        assert max(blocks) > DecodeParams().max_draft // 2
        assert sum(r.passes for r in aggressive) < sum(r.passes for r in greedy)


realistic = st.builds(
    lambda seed, extra: corrupt(clean_sentence(random.Random(seed)), random.Random(seed + extra)),
    st.integers(0, 10**6),
    st.integers(0, 1000),
)
text = st.one_of(realistic, realistic.map(lambda s: s + " " + s.lower()), st.text(max_size=40))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(text, min_size=1, max_size=6),
    echo=st.booleans(),
    cache=st.sampled_from(["compact", "masked"]),
    limit=st.one_of(st.none(), st.integers(1, 30)),
)
def test_aggressive_equals_greedy(t5: Exported, texts: list[str], echo: bool, cache: str, limit: int | None) -> None:
    engine = t5.engines[cache]
    sources = [s[: engine.max_source_tokens] for s in engine.codec.encode_batch(texts)]
    if echo:
        sources = _echoes(engine, sources)
    params = DecodeParams(max_new_tokens=limit)
    greedy = t5.engine.generate(sources, "greedy", params)
    aggressive = engine.generate(sources, "aggressive", params)
    assert [r.tokens for r in aggressive] == [r.tokens for r in greedy]
    assert [r.finished for r in aggressive] == [r.finished for r in greedy]
    for a, g in zip(aggressive, greedy, strict=True):
        assert a.passes <= g.passes
        assert sum(a.accepted) == g.passes
