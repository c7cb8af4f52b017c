"""Experiment files: the examples load; a bad file is refused with a message naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.experiments.arms import BACKENDS, Arm
from service.experiments.definition import ExperimentFileError, load_experiment

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "deploy" / "experiments").glob("*.yaml"))

GOOD = """
name: ab
arms:
  - {name: accelerated, weight: 1}
  - {name: slow, backend: autoregressive, weight: 3}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "experiment.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_files_load(path: Path) -> None:
    definition = load_experiment(path)
    assert definition.name == path.stem
    assert all(arm.arm().backend in BACKENDS for arm in definition.arms)


def test_arms_run_their_backend_with_changed_knobs(tmp_path: Path) -> None:
    definition = load_experiment(write(tmp_path, GOOD))
    assert definition.control_arm == "accelerated"
    assert definition.weights() == {"accelerated": 1, "slow": 3}
    draft = load_experiment(EXAMPLES[[p.name for p in EXAMPLES].index("draft-length.yaml")])
    arm = draft.arms[1].arm()
    assert (arm.backend, arm.params.max_draft, arm.queue, arm.exact) == ("accelerated", 32, "draft32", True)
    split = load_experiment(
        write(tmp_path, GOOD.replace("backend: autoregressive,", "backend: accelerated, params: {pass_cost: 2.5},"))
    )
    assert split.arms[1].arm().params.pass_cost == 2.5  # a cost, not a count: kept as given
    small = (
        load_experiment(
            write(
                tmp_path, GOOD.replace("backend: autoregressive,", "backend: accelerated, params: {max_batch_size: 4},")
            )
        )
        .arms[1]
        .arm()
    )
    assert (small.max_batch_size, small.queue, small.params) == (4, "slow", BACKENDS["accelerated"].params)
    assert Arm.of_backend("accelerated").max_batch_size is None
    picky = load_experiment(
        write(tmp_path, GOOD.replace("backend: autoregressive,", "backend: accelerated, params: {keep_bias: -0.5},"))
    )
    eager = picky.arms[1].arm()
    assert (eager.keep_bias, eager.queue, eager.params) == (-0.5, "slow", BACKENDS["accelerated"].params)
    assert Arm.of_backend("accelerated").keep_bias is None
    wide = load_experiment(
        write(
            tmp_path,
            GOOD.replace(
                "backend: autoregressive,", "backend: diverse, params: {num_beam_groups: 6, diversity_penalty: 0.5},"
            ),
        )
    )
    groups = wide.arms[1].arm().params
    assert (groups.num_beams, groups.num_beam_groups, groups.diversity_penalty) == (6, 6, 0.5)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (GOOD.replace("weight: 1}", "weight: -1}"), "arms.0.weight"),
        (GOOD.replace("weight: 1}", "weight: 0}").replace("weight: 3}", "weight: 0}"), "sum to zero"),
        (GOOD.replace("backend: autoregressive", "backend: quantum"), "quantum"),
        (GOOD.replace("{name: accelerated, weight: 1}", "{name: slow, backend: accelerated, weight: 1}"), "unique"),
        (GOOD.replace("backend: autoregressive,", "backend: autoregressive, params: {beam_width: 2},"), "beam_width"),
        (GOOD.replace("backend: autoregressive,", "backend: accelerated, params: {max_draft: 0.5},"), "max_draft"),
        (GOOD.replace("backend: autoregressive,", "backend: accelerated, params: {pass_cost: -1},"), "pass_cost"),
        (GOOD.replace("backend: autoregressive,", "backend: accelerated, params: {keep_bias: 6},"), "keep_bias"),
        (GOOD.replace("backend: autoregressive,", "backend: beam, params: {keep_bias: 1},"), "keep_bias"),
        (
            GOOD.replace("backend: autoregressive,", "backend: diverse, params: {num_beam_groups: 4},"),
            "num_beam_groups",
        ),
        (
            GOOD.replace("backend: autoregressive,", "backend: beam, params: {diversity_penalty: 1},"),
            "diversity_penalty",
        ),
        (
            GOOD.replace("backend: autoregressive,", "backend: diverse, params: {diversity_penalty: -1},"),
            "diversity_penalty",
        ),
        (
            GOOD.replace("backend: autoregressive,", "backend: accelerated, params: {max_batch_size: 0},"),
            "max_batch_size",
        ),
        (
            GOOD.replace("{name: accelerated, weight: 1}", "{name: accelerated, backend: beam, weight: 1}"),
            "accelerated",
        ),
        (GOOD + "control: nobody\n", "nobody"),
        (GOOD + "shadow: {arm: nobody, sample_rate: 0.1}\n", "nobody"),
        (GOOD + "shadow: {arm: slow, sample_rate: 2}\n", "shadow.sample_rate"),
        (GOOD + "colour: blue\n", "colour"),
        ("name: ab\narms: [{name: accelerated, weight: 1}]\n", "arms"),
        ("name: ab\narms: [\n", "experiment.yaml"),
        ("name: 'a b'\narms: []\n", "name"),
    ],
)
def test_bad_files_name_the_field(tmp_path: Path, text: str, field: str) -> None:
    with pytest.raises(ExperimentFileError, match=r"experiment\.yaml") as error:
        load_experiment(write(tmp_path, text))
    assert field in str(error.value)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ExperimentFileError, match=r"missing\.yaml"):
        load_experiment(tmp_path / "missing.yaml")


def test_an_arm_may_run_on_a_model_of_its_own(tmp_path: Path) -> None:
    text = GOOD + "  - {name: v2, model: gec-v2, backend: accelerated, weight: 1}\n"
    definition = load_experiment(write(tmp_path, text))
    assert definition.models() == {"gec-v2"}
    assert definition.arms[2].arm() == Arm("v2", "accelerated", (), "gec-v2")
    named_after_backend = GOOD + "  - {name: beam, model: gec-v2, weight: 1}\n"
    with pytest.raises(ExperimentFileError, match="give it another name"):
        load_experiment(write(tmp_path, named_after_backend))
    with pytest.raises(ExperimentFileError, match=r"arms\.2\.model"):
        load_experiment(write(tmp_path, GOOD + "  - {name: v2, model: 'bad name', backend: beam, weight: 1}\n"))
