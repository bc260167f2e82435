"""Run configuration: training presets, overrides, and the run's self-describing name."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from covlib.base.errors import CovlibError
from covlib.base.presets import PRESETS
from covlib.training.mamba import MambaModelConfig
from covlib.training.model import MODEL_FAMILIES, MODEL_PRESETS, ModelConfig, family_config
from covlib.training.shapes import model_overrides

DECISION_TYPES = ("type_0", "train_inferred")  # the test types a run's early stop and give-up rule read


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and bookkeeping knobs; the defaults are the CPU recipe measured in benchmarks/."""

    steps: int = 2000  # fixed step budget
    batch_size: int = 512
    grad_accum: int = 1  # micro-batches per step (same result, less memory: the paper preset)
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.98)
    weight_decay: float = 0.1  # on weight matrices and embeddings; never on biases or LayerNorm
    warmup_steps: int = 100  # linear warm-up, then constant
    grad_clip: float = 1.0
    seed: int = 42  # model init and batch order
    eval_every: int = 50
    eval_batch_size: int = 2048
    checkpoint_every: int = 250  # also at the end; 0 = only at the end
    keep_checkpoints: bool = False  # also keep checkpoints/step_NNNNNN.pt (for training-dynamics analyses)
    threshold: float = 0.99  # type_0 accuracy whose first crossing is recorded
    early_stop: bool = False  # stop at the first evaluation with acc/type_0 >= threshold
    # the authors' give-up rule: stop once the training set has been fitted (acc/train_inferred
    # >= fit_threshold) for this many epochs without reaching the threshold; 0 = never give up
    give_up_epochs: float = 0.0
    # with give_up_epochs: also wait at least this many steps after the fit (a floor that does not shrink with
    # the training set: 100 epochs of a small set are a few hundred steps); 0 = the authors' rule alone
    give_up_floor: int = 0
    fit_threshold: float = 0.99
    fast_forward: bool = True  # train through model.FastForward (same function, fused ops, no hook wrappers)
    # lean evaluation: every evaluation but the last scores only these test types, teacher-forced (no greedy
    # decoding of CoT targets); the last evaluation scores everything. The decisions (early stop, give-up) read
    # type_0 and train_inferred alone, so they must be among them and the run trains exactly as with every
    # type (evaluation touches neither weights nor random state). Empty: every evaluation scores everything
    eval_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "betas", tuple(float(b) for b in self.betas))
        object.__setattr__(self, "eval_types", tuple(self.eval_types))
        missing = [t for t in DECISION_TYPES if self.eval_types and t not in self.eval_types]
        if missing:
            raise CovlibError(f"eval_types={list(self.eval_types)} leaves out {missing}, which early stop and the "
                              f"give-up rule read; add them (or pass no eval_types to score every type)")
        positive = ("steps", "batch_size", "grad_accum", "eval_every", "eval_batch_size")
        for name in positive:
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise CovlibError(f"{name}={getattr(self, name)!r} must be a positive integer")
        if self.batch_size % self.grad_accum:
            raise CovlibError(f"batch_size={self.batch_size} must be a multiple of grad_accum={self.grad_accum}")
        if self.give_up_epochs < 0:
            raise CovlibError(f"give_up_epochs={self.give_up_epochs} must be 0 (never give up) or more")
        if not isinstance(self.give_up_floor, int) or self.give_up_floor < 0:
            raise CovlibError(f"give_up_floor={self.give_up_floor!r} must be a whole number of steps, 0 or more")
        if self.checkpoint_every < 0 or self.warmup_steps < 0:
            raise CovlibError("checkpoint_every and warmup_steps must be 0 or more")
        if not self.lr > 0 or self.weight_decay < 0 or not self.grad_clip > 0:
            raise CovlibError(f"lr={self.lr} and grad_clip={self.grad_clip} must be > 0, weight_decay >= 0")


TRAIN_PRESETS: dict[str, TrainConfig] = {
    "smoke": TrainConfig(steps=300, batch_size=128, warmup_steps=20, eval_every=50, checkpoint_every=100),
    "default": TrainConfig(),
    # the authors' run: AdamW (0.9, 0.999), lr 8e-4 after 2000 warm-up steps, batch 16,384, eval every 25
    "paper": TrainConfig(steps=62_500, batch_size=16_384, grad_accum=8, lr=8e-4, betas=(0.9, 0.999),
                         warmup_steps=2000, eval_every=25, checkpoint_every=500, early_stop=True),
}


RESUME_MAY_CHANGE = ("steps", "early_stop", "threshold", "keep_checkpoints", "checkpoint_every", "eval_batch_size",
                     "give_up_epochs", "give_up_floor", "fit_threshold", "eval_types")


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines a run: model shape, optimisation, and which preset it came from."""

    model: ModelConfig | MambaModelConfig
    train: TrainConfig
    preset: str = "default"

    def to_dict(self) -> dict:
        return {"preset": self.preset, "model": dataclasses.asdict(self.model), "train": dataclasses.asdict(self.train)}


def make_config(preset: str = "default", overrides: dict | None = None) -> RunConfig:
    """A preset's RunConfig with ``overrides`` applied (flat keys such as ``lr`` or ``n_layers``,
    or dotted ones such as ``model.d_model``); unknown presets or keys raise CovlibError.

    ``family`` picks the model family ("transformer", the default, or "mamba"); a Mamba model starts from
    the preset's depth and width and takes its own settings (d_state, expand, d_conv)."""
    if preset not in TRAIN_PRESETS:
        raise CovlibError(f"unknown preset {preset!r}; choose one of: {', '.join(PRESETS)}")
    overrides = dict(overrides or {})
    family = _pop_family(overrides)
    model, tr = family_config(family, MODEL_PRESETS[preset]), TRAIN_PRESETS[preset]
    m_names = [f.name for f in dataclasses.fields(model) if f.init]
    t_names = [f.name for f in dataclasses.fields(TrainConfig)]
    m_set, t_set = {}, {}
    for key, value in overrides.items():
        scope, _, name = key.rpartition(".")
        if scope in ("", "model") and name in m_names:
            m_set[name] = _coerce(value, getattr(model, name), key)
        elif scope in ("", "train") and name in t_names:
            t_set[name] = _coerce(value, getattr(tr, name), key)
        elif scope in ("", "model") and _other_family_field(name, family):
            raise CovlibError(f"{key!r} is not a setting of a {family} model; its settings are: {', '.join(m_names)} "
                              f"(choose the family with family=..., one of: {', '.join(MODEL_FAMILIES)})")
        else:
            raise CovlibError(
                f"unknown setting {key!r}; model settings: family, {', '.join(m_names)}; training settings: {', '.join(t_names)}"
            )
    return RunConfig(dataclasses.replace(model, **m_set), dataclasses.replace(tr, **t_set), preset)


def model_params(model: str, N: int, n_ctx: int) -> int:
    """Parameters of a named model shape (covlib.training.shapes; either family) on a vocabulary of N task tokens
    plus </a>."""
    return make_config("default", model_overrides(model)).model.n_params(N + 1, n_ctx)


def _pop_family(overrides: dict) -> str:
    """Take the model family out of ``overrides`` (key ``family`` or ``model.family``; default transformer)."""
    given = {k: overrides.pop(k) for k in ("family", "model.family") if k in overrides}
    values = set(map(str, given.values()))
    if len(values) > 1:
        raise CovlibError(f"the model family is set twice, differently: {given}; set it once")
    return values.pop() if values else ModelConfig.family  # family_config refuses an unknown one


def _other_family_field(name: str, family: str) -> bool:
    """Whether ``name`` is a setting of a model family other than ``family`` (e.g. n_heads for a Mamba model)."""
    return any(name in {f.name for f in dataclasses.fields(cls)} for fam, cls in MODEL_FAMILIES.items() if fam != family)


def _coerce(value, current, key: str):
    """Parse CLI strings (``--set lr=3e-4``) into the type of the field's current value."""
    if isinstance(value, str) and not isinstance(current, str):
        try:
            value = json.loads(value.replace("(", "[").replace(")", "]"))
        except json.JSONDecodeError:
            raise CovlibError(f"cannot read {key}={value!r}: expected a value like {current!r}") from None
    if isinstance(current, bool) and not isinstance(value, bool):
        raise CovlibError(f"{key} must be true or false, got {value!r}")
    if isinstance(current, float) and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(current, tuple) and isinstance(value, list):
        value = tuple(value)
    if current is not None and not isinstance(value, type(current)):
        raise CovlibError(f"{key} must be a {type(current).__name__} like {current!r}, got {value!r}")
    return value


def run_name(dataset_name: str, cfg: RunConfig) -> str:
    """The authors' run-folder style: ``<dataset>_wd-0.1_layer-4_head-4_seed-42``; a Mamba model names its
    family and width where a transformer names its heads (``..._wd-0.1_mamba_layer-4_d-128_seed-42``)."""
    m, head = cfg.model, f"_wd-{cfg.train.weight_decay:g}"
    if isinstance(m, MambaModelConfig):
        return f"{dataset_name}{head}_mamba_layer-{m.n_layers}_d-{m.d_model}_seed-{cfg.train.seed}"
    return f"{dataset_name}{head}_layer-{m.n_layers}_head-{m.n_heads}_seed-{cfg.train.seed}"
