"""Clean the learner pairs with a teacher before a model is trained on them: flag the pairs whose target is unrelated
to its source, or reads worse than it, by the current model's and the language model's scores.

    python -m models.gec.teacher --data ../shared/data --model runs/gec-v3-hf \
        --language-model models/gec-default/ngrams.npz --out runs/teacher

Annotators of learner corpora rewrite freely, and a few pairs teach the wrong thing: Lang-8's volunteers answer a
question instead of correcting it, replace a sentence with another, or leave a correction half made. A pair is

- ``unrelated`` when its two sides share less than ``UNRELATED_SIMILARITY`` of their letters (``rapidfuzz``'s
  normalised Indel similarity, 0..100): the target is another sentence, not a correction of the source;
- ``worse`` when both teachers say the target reads worse than the source: the language model scores it
  ``WORSE_LM_MARGIN`` or more lower (log10 a token) and the current model finds it improbable as a correction of
  the source (its mean log-probability a token, teacher-forced, under ``WORSE_MODEL_LOGPROB`` nats).

Flagged pairs are dropped (``clean_pairs``); ``--out`` writes every flagged pair with its scores
(``flagged.tsv``) and a summary by corpus and flag (``summary.json``), printed as a table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from rapidfuzz import fuzz
from tokenizers import Tokenizer
from tqdm import tqdm
from transformers import AutoModelForSeq2SeqLM

from models.gec.corpora import Pair, learner_pairs
from models.gec.dataset import batch_plan, make_batch, pack_pairs
from service.engine.report import table
from service.text.ngrams import NgramModel, tokens_of

UNRELATED_SIMILARITY = 50.0
WORSE_LM_MARGIN = 0.25
WORSE_MODEL_LOGPROB = -2.5
MAX_LEN = 128
SCORE_TOKENS = 8192  # padded tokens a side in one scoring batch


@dataclass(frozen=True)
class Verdict:
    """A learner pair's teacher scores and its flag (``""`` when kept)."""

    similarity: float
    lm_gain: float  # target's mean log10 score a token minus the source's
    model_logprob: float  # the model's mean log-probability (nats) a target token, given the source
    flag: str


def lm_per_token(language_model: NgramModel, texts: Sequence[str]) -> np.ndarray:
    """Each text's language-model score (log10) divided by its tokens."""
    lengths = np.array([max(1, len(tokens_of(text)) - 1) for text in texts], dtype=np.float64)
    return language_model.scores(texts) / lengths


def model_logprobs(model_dir: Path, sources: Sequence[str], targets: Sequence[str], threads: int) -> np.ndarray:
    """The model's mean log-probability (nats) of each target token given its source, teacher-forced; NaN for a
    pair too long to score."""
    torch.set_num_threads(threads)
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.post_processor = None
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir).eval()
    encoded_src = tokenizer.encode_batch(list(sources), add_special_tokens=False)
    encoded_tgt = tokenizer.encode_batch(list(targets), add_special_tokens=False)
    kept = [i for i, (s, t) in enumerate(zip(encoded_src, encoded_tgt, strict=True))
            if len(s.ids) < MAX_LEN and len(t.ids) < MAX_LEN]  # fmt: skip
    packed = pack_pairs(tokenizer, [sources[i] for i in kept], [targets[i] for i in kept], MAX_LEN)
    scores = np.full(len(sources), np.nan)
    plan = batch_plan(np.maximum(packed.lengths(), 1), SCORE_TOKENS, seed=0)
    with torch.no_grad(), torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        for rows in tqdm(plan, desc="teacher scores", unit="batch", file=sys.stderr):
            batch = make_batch(packed, rows)
            logits = model(
                input_ids=torch.from_numpy(batch.input_ids),
                attention_mask=torch.from_numpy(batch.attention_mask),
                decoder_input_ids=torch.from_numpy(batch.decoder_input_ids),
            ).logits.float()
            labels = torch.from_numpy(batch.labels)
            picked = torch.log_softmax(logits, -1).gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            real = labels != -100
            means = (picked * real).sum(-1) / real.sum(-1)
            for row, mean in zip(rows, means.tolist(), strict=True):
                scores[kept[row]] = mean
    return scores


def judge(pairs: Sequence[Pair], model_dir: Path, language_model: NgramModel, threads: int) -> list[Verdict]:
    """Every changed pair's teacher verdict (a pair whose sides are equal is kept unscored)."""
    changed = [i for i, pair in enumerate(pairs) if pair.src != pair.tgt]
    sources = [pairs[i].src for i in changed]
    targets = [pairs[i].tgt for i in changed]
    gains = lm_per_token(language_model, targets) - lm_per_token(language_model, sources)
    logprobs = model_logprobs(model_dir, sources, targets, threads)
    verdicts = [Verdict(100.0, 0.0, 0.0, "")] * len(pairs)
    for k, i in enumerate(changed):
        similarity = fuzz.ratio(sources[k], targets[k])
        worse = gains[k] <= -WORSE_LM_MARGIN and logprobs[k] < WORSE_MODEL_LOGPROB
        flag = "unrelated" if similarity < UNRELATED_SIMILARITY else "worse" if worse else ""
        verdicts[i] = Verdict(similarity, float(gains[k]), float(logprobs[k]), flag)
    return verdicts


def clean_pairs(pairs: Sequence[Pair], verdicts: Sequence[Verdict]) -> list[Pair]:
    """The pairs the teacher did not flag."""
    return [pair for pair, verdict in zip(pairs, verdicts, strict=True) if not verdict.flag]


SUMMARY_COLUMNS = ("corpus", "pairs", "unrelated", "worse", "kept", "dropped %")


def summary_rows(pairs: Sequence[Pair], verdicts: Sequence[Verdict]) -> list[dict[str, object]]:
    """Per corpus: pairs, flagged unrelated, flagged worse, kept, and the share dropped."""
    total = Counter(pair.origin for pair in pairs)
    flagged = Counter((pair.origin, v.flag) for pair, v in zip(pairs, verdicts, strict=True) if v.flag)
    rows: list[dict[str, object]] = []
    for origin in sorted(total):
        dropped = flagged[origin, "unrelated"] + flagged[origin, "worse"]
        values = (origin, total[origin], flagged[origin, "unrelated"], flagged[origin, "worse"],
                  total[origin] - dropped, round(100 * dropped / total[origin], 1))  # fmt: skip
        rows.append(dict(zip(SUMMARY_COLUMNS, values, strict=True)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the GEC data directory (../shared/data)")
    parser.add_argument("--model", type=Path, required=True, help="the teacher: a checkpoint (models.gec.unpack)")
    parser.add_argument("--language-model", type=Path, required=True, help="an ngrams.npz")
    parser.add_argument("--out", type=Path, required=True, help="folder for flagged.tsv and summary.json")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    pairs = learner_pairs(args.data)
    verdicts = judge(pairs, args.model, NgramModel.load(args.language_model), args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "flagged.tsv").open("w", encoding="utf-8") as handle:
        handle.write("corpus\tflag\tsimilarity\tlm_gain\tmodel_logprob\tsource\ttarget\n")
        for pair, v in zip(pairs, verdicts, strict=True):
            if v.flag:
                handle.write(f"{pair.origin}\t{v.flag}\t{v.similarity:.1f}\t{v.lm_gain:.3f}\t{v.model_logprob:.3f}\t"
                             f"{pair.src}\t{pair.tgt}\n")  # fmt: skip
    rows = summary_rows(pairs, verdicts)
    (args.out / "summary.json").write_text(json.dumps(rows, indent=2))
    print(table(rows, SUMMARY_COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
