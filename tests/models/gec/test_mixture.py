"""The mixture a continued model trains on: learner pairs the teacher kept, identity pairs, targeted errors; never a
sentence of the clean set or the dev sets."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from models.gec.clean_set import key
from models.gec.corpora import LEARNER_CORPORA
from models.gec.dataset import PackedPairs
from models.gec.mixture import DEV_FILES, mixture_pairs, prepare_mixture
from models.gec.tokenizer import train_tokenizer

MONO = [f"The committee number {n} approved the new budget for the coming year." for n in range(60)]
CLEAN_SET = MONO[:10]
DEV = MONO[10:15]


def _data(root: Path) -> tuple[Path, Path, Path]:
    (root / "train").mkdir(parents=True)
    (root / "mono").mkdir()
    (root / "dev").mkdir()
    for corpus in LEARNER_CORPORA:
        (root / "train" / f"{corpus}.train.detok.src").write_text("She like tea.\nSincerely,\n")
        (root / "train" / f"{corpus}.train.detok.tgt").write_text("She likes tea.\nYours faithfully,\n")
    with gzip.open(root / "mono" / "en.wikipedia.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(MONO) + "\n")
    for name in DEV_FILES:
        (root / "dev" / name).write_text("\n".join(DEV) + "\n")
    flagged = root / "flagged.tsv"
    rows = [f"{corpus}\tunrelated\t20.0\t0.5\t-2.0\tSincerely,\tYours faithfully," for corpus in LEARNER_CORPORA]
    flagged.write_text("corpus\tflag\tsimilarity\tlm_gain\tmodel_logprob\tsource\ttarget\n" + "\n".join(rows) + "\n")
    clean = root / "clean-set.tsv"
    clean.write_text("register\tsource\tsentence\n" + "".join(f"legal\twikipedia\t{s}\n" for s in CLEAN_SET))
    return root, flagged, clean


def test_the_mixture_keeps_its_parts_apart_and_never_takes_an_unseen_sentence(tmp_path: Path) -> None:
    data, flagged, clean = _data(tmp_path / "data")
    parts = mixture_pairs(data, flagged, clean, identity=20, targeted=20, seed=1)
    assert [p.tgt for p in parts["learner"]] == ["She likes tea."] * len(LEARNER_CORPORA)
    assert len(parts["identity"]) == 20 and all(p.src == p.tgt for p in parts["identity"])
    assert len(parts["targeted"]) == 20 and sum(p.src != p.tgt for p in parts["targeted"]) >= 15
    unseen = {key(s) for s in CLEAN_SET + DEV}
    drawn = [p.tgt for name in ("identity", "targeted") for p in parts[name]]
    assert len(set(drawn)) == 40 and not {key(s) for s in drawn} & unseen


def test_prepare_writes_the_packed_mixture_and_its_summary(tmp_path: Path) -> None:
    data, flagged, clean = _data(tmp_path / "data")
    tokenizer = train_tokenizer(MONO * 5 + ["She likes tea."] * 5, vocab_size=300, min_frequency=1)
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    run = tmp_path / "run"
    summary = prepare_mixture(data, run, tmp_path / "tokenizer.json", flagged, clean, 10, 10, seed=2)
    assert summary["mixture"] == {"learner": len(LEARNER_CORPORA), "identity": 10, "targeted": 10}
    packed = PackedPairs.load(run / "stage2.npz")
    assert len(packed) == summary["stage2_pairs"] == len(LEARNER_CORPORA) + 20
    identity_rows = range(len(LEARNER_CORPORA), len(LEARNER_CORPORA) + 10)
    assert all(np.array_equal(packed.src_row(i), packed.tgt_row(i)) for i in identity_rows)
    assert json.loads((run / "data.json").read_text())["vocab_size"] == tokenizer.get_vocab_size()
