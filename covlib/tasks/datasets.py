"""Dataset generation: random primitive tables, the seen split, training and test sets."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from covlib import __version__
from covlib.base.errors import CovlibError
from covlib.base.files import folder_lock, write_folder_atomic
from covlib.base.paths import default_root
from covlib.tasks.codes import decode
from covlib.tasks.folders import END, FAKE_BRIDGE, META, dumps_items, item_texts
from covlib.tasks.graphs import Task, get_task, is_formula

CHUNK = 1 << 22  # codes per enumeration chunk: ~4M inputs keeps peak memory near 200 MB


MAX_SPACE = 1 << 32  # inputs we are willing to enumerate exactly (a few minutes at worst)


TRAIN_INFERRED = "train_inferred"


@dataclass(frozen=True)
class DatasetConfig:
    """Every argument that determines a dataset; the same config always gives the same files."""

    task: str
    num_tokens: int
    n_train: int
    seed: int = 42
    seen_ratio: float = 0.7
    test_size_per_type: int = 2000
    cot: bool = False
    fake_bridge: bool = False
    same_functions: bool = False
    include_atomic: bool = False
    commutative: tuple[str, ...] = ()  # primitives drawn symmetric: f(a,b) = f(b,a); seen split stays per fact
    # composed items added to training whose first hop uses a held-out fact of its table and every later hop a
    # seen fact: held-out facts taught only in the first hop's role (test types still describe the ID items)
    first_role_items: int = 0
    # another draw of the training and test items from the same task instance: the tables and the seen split still
    # come from ``seed``, the sampling of items from this (None: from ``seed`` too, as always). A replicate probe
    # uses it to tell the noise of the draw from that of the initialisation
    draw_seed: int | None = None

    def __post_init__(self) -> None:
        task = get_task(self.task)  # raises on an unknown task
        object.__setattr__(self, "task", task.name)
        object.__setattr__(self, "commutative", tuple(sorted(set(self.commutative))))
        tables = task.table_names(self.same_functions)
        for name in self.commutative:
            if name not in tables or task.primitives[name] != 2:
                raise CovlibError(
                    f"commutative={name!r}: {task.name} has no binary table of that name; choose among "
                    f"{', '.join(t for t in tables if task.primitives[t] == 2)}"
                )
        if self.num_tokens < 2:
            raise CovlibError(f"num_tokens={self.num_tokens} is too small: a task needs at least 2 tokens")
        if not 0.0 < self.seen_ratio <= 1.0:
            raise CovlibError(f"seen_ratio={self.seen_ratio} must lie in (0, 1]")
        if self.n_train < 1:
            raise CovlibError(f"n_train={self.n_train} must be at least 1")
        if self.first_role_items < 0:
            raise CovlibError(f"first_role_items={self.first_role_items} must be 0 or more")
        if self.test_size_per_type < 0:
            raise CovlibError(f"test_size_per_type={self.test_size_per_type} must be 0 or more")
        task.table_of_hop(self.same_functions)  # raises when the tables cannot be shared
        if self.num_tokens**task.n_inputs > MAX_SPACE:
            raise CovlibError(
                f"{task.name} with N={self.num_tokens} has {self.num_tokens ** task.n_inputs:.2e} inputs, more "
                f"than the {MAX_SPACE:.1e} covlib enumerates exactly; use a smaller num_tokens (N)",
                parameter="num_tokens",
            )

    @property
    def task_spec(self) -> Task:
        return get_task(self.task)

    @property
    def mode(self) -> str:
        """Target style: plain answer, true bridges first, or placeholder bridges first."""
        return "fakebridge" if self.fake_bridge else "cot" if self.cot else "inf"

    @property
    def folder_name(self) -> str:
        """The authors' self-describing folder name, plus suffixes for non-default knobs."""
        task = self.task_spec
        fnames = "f" + "".join(str(i + 1) for i in range(len(task.primitives)))
        parts = [task.authors_name, str(self.num_tokens), str(self.n_train),
                 f"{'same' if self.same_functions else 'diff'}-{fnames}", self.mode]
        if self.include_atomic:
            parts.append("include-atomic")
        if self.commutative:
            parts.append("comm-" + "".join(self.commutative))
        if self.first_role_items:
            parts.append(f"first-role-{self.first_role_items}")
        if self.seen_ratio != 0.7:
            parts.append(f"seen-{self.seen_ratio:g}")
        if self.seed != 42:
            parts.append(f"seed-{self.seed}")
        if self.draw_seed is not None:
            parts.append(f"draw-{self.draw_seed}")
        return ".".join(parts)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["commutative"] = list(self.commutative)
        if not self.commutative:  # keep covlib.json of every existing config unchanged
            del d["commutative"]
        if not self.first_role_items:
            del d["first_role_items"]
        if self.draw_seed is None:
            del d["draw_seed"]
        return d


@dataclass
class Dataset:
    """A generated dataset in memory: the tables behind it and its items as token-id arrays."""

    config: DatasetConfig
    tables: dict[str, np.ndarray]  # primitive table name -> int array of shape (N,)*arity
    seen_split: dict[str, np.ndarray]  # bool, same shape: may appear in training
    seen_used: dict[str, np.ndarray]  # bool: used by at least one training example
    train_inputs: np.ndarray  # (n_train + first_role_items, m), in training order (the first-role items last)
    test_inputs: np.ndarray  # (n_test, m)
    test_types: np.ndarray  # (n_test,) str
    eligible_count: int = 0
    population: dict[str, int] = field(default_factory=dict)  # test type -> inputs of that type

    @property
    def task(self) -> Task:
        return self.config.task_spec

    def evaluate(self, inputs: np.ndarray) -> dict[str, np.ndarray]:
        """Every node's value (bridges and t) for a batch of inputs."""
        return self.task.evaluate(inputs, self.tables, self.config.same_functions)[0]

    def type_names(self, inputs: np.ndarray) -> np.ndarray:
        """The test type each input would get from the used-seen facts (ignores train overlap)."""
        ids = type_ids(self.task, self.tables, self.seen_used, self.config.same_functions, inputs)
        return np.array([type_name(i) for i in range(2 ** len(self.task.hops))])[ids]


def symmetrise(table: np.ndarray) -> np.ndarray:
    """A binary table with f(a,b) = f(b,a): the upper triangle of ``table`` mirrored below the diagonal."""
    upper = np.triu(table)
    return (upper + np.triu(table, 1).T).astype(table.dtype)


def type_name(type_id: int) -> str:
    return f"type_{type_id}"


def type_ids(task: Task, tables: dict, seen: dict, same_functions: bool, inputs: np.ndarray) -> np.ndarray:
    """Test type per input: bits = sum_h s_h * 2^(H-1-h); type_0 if all seen, else type_{bits+1}."""
    _, facts = task.evaluate(inputs, tables, same_functions)
    return types_of_facts(task, seen, same_functions, facts)


def types_of_facts(task: Task, seen: dict, same_functions: bool, facts: list[np.ndarray]) -> np.ndarray:
    """type_ids from the flat index of the fact each hop uses (Task.evaluate's second result)."""
    n_hops = len(task.hops)
    dtype = np.int16 if n_hops < 15 else np.int64  # type ids up to 2^H, and -1 for what a caller excludes
    bits = np.zeros(len(facts[0]), dtype=dtype)
    for h, (flat, table_name) in enumerate(zip(facts, task.table_of_hop(same_functions))):
        # each fact's bit looked up in a table of the primitive's size, not converted input by input (5x faster)
        bit_of_fact = seen[table_name].reshape(-1).astype(dtype) << (n_hops - 1 - h)
        bits |= bit_of_fact[flat]
    full = (1 << n_hops) - 1
    return np.where(bits == full, 0, bits + 1)


POOL_SPACE = 1 << 24  # input spaces up to this size keep every input's facts in memory between datasets
_pools: dict[bytes, list[np.ndarray]] = {}  # a digest of (task, tables) -> per hop, every input's fact (int32)


def space_facts(task: Task, tables: dict, same_functions: bool, num_tokens: int) -> list[np.ndarray] | None:
    """Per hop, the flat index of the fact every input of the space uses (input code order), computed once per
    task and tables and kept for the next dataset of the same tables (the two most recent), so that labelling
    the whole space becomes a few gathers; None for a space above POOL_SPACE (generate then labels in chunks).
    A search generates many datasets of one cell that differ only in n_train: they share their tables."""
    space = num_tokens**task.n_inputs
    if space > POOL_SPACE:
        return None
    digest = hashlib.blake2b(repr((task.name, task.graph, same_functions, num_tokens)).encode(), digest_size=16)
    for name in sorted(tables):
        digest.update(name.encode() + np.ascontiguousarray(tables[name]).tobytes())
    key = digest.digest()
    if key not in _pools:
        # an open grid (x_i varies along axis i), so no input code is decoded; raveled in C order, axis 0 (x1)
        # most significant, the facts come out in input code order
        grid = dict(zip(task.input_names, np.ogrid[tuple(slice(0, num_tokens) for _ in range(task.n_inputs))]))
        _, facts = task.evaluate_columns(grid, tables, same_functions)
        full = (num_tokens,) * task.n_inputs
        _pools[key] = [np.broadcast_to(f, full).astype(np.int32).reshape(-1) for f in facts]
        while len(_pools) > 2:
            _pools.pop(next(iter(_pools)))
    return _pools[key]


def sample_classes(classes: dict[int, np.ndarray], quotas: dict[int, int], rng: np.random.Generator
                   ) -> tuple[dict[int, np.ndarray], dict[int, int]]:
    """sample_by_label over classes already listed (each the sorted codes of one label): the same draws from
    ``rng`` and the same samples."""
    counts = {lab: len(classes[lab]) for lab in quotas}
    ranks = {lab: np.sort(rng.choice(counts[lab], size=min(q, counts[lab]), replace=False)) for lab, q in quotas.items()}
    return {lab: classes[lab][ranks[lab]] for lab in quotas}, counts


def _chunks(space: int) -> Iterator[np.ndarray]:
    for start in range(0, space, CHUNK):
        yield np.arange(start, min(start + CHUNK, space), dtype=np.int64)


def sample_by_label(
    space: int, label: Callable[[np.ndarray], np.ndarray], quotas: dict[int, int], rng: np.random.Generator
) -> tuple[dict[int, np.ndarray], dict[int, int]]:
    """Uniform sample without replacement of ``quotas[l]`` codes from each label class.

    Two chunked passes over all codes: count each class, draw ranks, then collect the codes at
    those ranks. Labels < 0 are excluded. Returns sampled codes (sorted) and class sizes.
    """
    counts = {lab: 0 for lab in quotas}
    for codes in _chunks(space):
        labels = label(codes)
        for lab in quotas:
            counts[lab] += int(np.count_nonzero(labels == lab))
    ranks = {lab: np.sort(rng.choice(counts[lab], size=min(q, counts[lab]), replace=False)) for lab, q in quotas.items()}
    picked: dict[int, list[np.ndarray]] = {lab: [] for lab in quotas}
    seen_so_far = {lab: 0 for lab in quotas}
    for codes in _chunks(space):
        labels = label(codes)
        for lab in quotas:
            members = codes[labels == lab]
            lo, hi = seen_so_far[lab], seen_so_far[lab] + len(members)
            r = ranks[lab]
            sel = r[(r >= lo) & (r < hi)] - lo
            picked[lab].append(members[sel])
            seen_so_far[lab] = hi
    return {lab: np.concatenate(parts) for lab, parts in picked.items()}, counts


def first_role_codes(config: DatasetConfig, tables: dict, seen_split: dict, rng: np.random.Generator) -> np.ndarray:
    """Codes of ``config.first_role_items`` composed inputs drawn uniformly (in random order) among those whose
    first hop uses a held-out fact of its table and every later hop a seen fact: they teach held-out facts in
    the first hop's role only. Raises CovlibError when fewer such inputs exist."""
    task = config.task_spec
    n_tok, m = config.num_tokens, task.n_inputs
    hop_tables = task.table_of_hop(config.same_functions)

    def label(codes: np.ndarray) -> np.ndarray:
        _, facts = task.evaluate(decode(codes, n_tok, m), tables, config.same_functions)
        ok = ~seen_split[hop_tables[0]].reshape(-1)[facts[0]]
        for flat, name in zip(facts[1:], hop_tables[1:]):
            ok &= seen_split[name].reshape(-1)[flat]
        return np.where(ok, 0, -1)

    picked, counts = sample_by_label(n_tok**m, label, {0: config.first_role_items}, rng)
    if config.first_role_items > counts[0]:
        raise CovlibError(f"first_role_items={config.first_role_items} exceeds the {counts[0]} inputs of {task.name} at "
                          f"N={n_tok} whose first fact is held out and later facts seen; lower it")
    return picked[0][rng.permutation(len(picked[0]))]


def generate(config: DatasetConfig) -> Dataset:
    """Build a dataset as the paper does (primitive tables, seen split, training set, test types); raises
    CovlibError on impossible requests."""
    task = config.task_spec
    n_tok, m = config.num_tokens, task.n_inputs
    rng = np.random.default_rng(config.seed)
    arity = task.primitives
    names = task.table_names(config.same_functions)
    tables = {name: rng.integers(0, n_tok, size=(n_tok,) * arity[name], dtype=np.int32) for name in names}
    for name in config.commutative:  # keep the upper triangle (diagonal included), mirror it below
        tables[name] = symmetrise(tables[name])
    seen_split = {}
    for name in names:
        size = n_tok ** arity[name]
        seen = np.zeros(size, dtype=bool)
        seen[rng.permutation(size)[: int(round(config.seen_ratio * size))]] = True
        seen_split[name] = seen.reshape((n_tok,) * arity[name])
    if config.draw_seed is not None:  # the same task instance, another sample of its items
        rng = np.random.default_rng([config.seed, config.draw_seed])

    space = n_tok**m
    pool_facts = space_facts(task, tables, config.same_functions, n_tok)  # None: label the space chunk by chunk

    def eligible(codes: np.ndarray) -> np.ndarray:
        ids = type_ids(task, tables, seen_split, config.same_functions, decode(codes, n_tok, m))
        return np.where(ids == 0, 0, -1)

    if pool_facts is None:
        picked, counts = sample_by_label(space, eligible, {0: config.n_train}, rng)
    else:
        ids = types_of_facts(task, seen_split, config.same_functions, pool_facts)
        picked, counts = sample_classes({0: np.flatnonzero(ids == 0)}, {0: config.n_train}, rng)
    train_codes, n_eligible = picked[0], counts[0]
    if config.n_train >= n_eligible:
        raise CovlibError(
            f"n_train={config.n_train} is not below the {n_eligible} ID-eligible inputs of {task.name} at "
            f"N={n_tok}, seen_ratio={config.seen_ratio}; the maximum is {n_eligible - 1}: lower n_train",
            parameter="n_train",
        )
    train_codes = train_codes[rng.permutation(len(train_codes))]
    train_inputs = decode(train_codes, n_tok, m)

    seen_used = {name: np.zeros_like(seen_split[name]) for name in names}
    _, facts = task.evaluate(train_inputs, tables, config.same_functions)
    for flat, name in zip(facts, task.table_of_hop(config.same_functions)):
        seen_used[name].reshape(-1)[flat] = True

    if config.first_role_items:  # after seen_used: the test types keep describing the ID items
        extra = first_role_codes(config, tables, seen_split, rng)
        train_codes = np.concatenate([train_codes, extra])
        train_inputs = decode(train_codes, n_tok, m)

    train_sorted = np.sort(train_codes)

    def test_label(codes: np.ndarray) -> np.ndarray:
        ids = type_ids(task, tables, seen_used, config.same_functions, decode(codes, n_tok, m))
        pos = np.minimum(np.searchsorted(train_sorted, codes), len(train_sorted) - 1)
        return np.where(train_sorted[pos] == codes, -1, ids)

    n_types = 1 << len(task.hops)
    quotas = {t: config.test_size_per_type for t in range(n_types)}
    if pool_facts is None:
        by_type, population = sample_by_label(space, test_label, quotas, rng)
    else:
        ids = types_of_facts(task, seen_used, config.same_functions, pool_facts)
        ids[train_sorted] = -1
        by_type, population = sample_classes({t: np.flatnonzero(ids == t) for t in quotas}, quotas, rng)

    inferred = train_inputs[np.sort(rng.choice(len(train_inputs), size=min(config.test_size_per_type, len(train_inputs)), replace=False))]
    parts = [inferred] + [decode(by_type[t], n_tok, m) for t in range(n_types)]
    types = [TRAIN_INFERRED] * len(inferred) + [type_name(t) for t in range(n_types) for _ in range(len(by_type[t]))]
    order = rng.permutation(len(types))
    return Dataset(
        config=config,
        tables=tables,
        seen_split=seen_split,
        seen_used=seen_used,
        train_inputs=train_inputs,
        test_inputs=np.concatenate(parts)[order],
        test_types=np.array(types, dtype=object)[order].astype(str),
        eligible_count=n_eligible,
        population={type_name(t): c for t, c in population.items()},
    )


def target_tokens(dataset: Dataset, inputs: np.ndarray) -> np.ndarray:
    """Token ids written after the prompt: bridges (true or placeholder) if CoT, then the answer.

    Placeholder ``</b>`` has id N, as in the authors' vocabulary; ``</a>`` is appended on write.
    """
    values = dataset.evaluate(inputs)
    cols = []
    if dataset.config.fake_bridge:
        cols = [np.full(len(inputs), dataset.config.num_tokens, dtype=np.int32) for _ in dataset.task.bridges]
    elif dataset.config.cot:
        cols = [values[b] for b in dataset.task.bridges]
    return np.stack(cols + [values["t"]], axis=1).astype(np.int32)


def dataset_files(dataset: Dataset) -> dict[str, str]:
    """The folder's files as text, in the authors' format (plus covlib.json)."""

    cfg = dataset.config
    n_tok = cfg.num_tokens
    vocab = [f"<t_{i}>" for i in range(n_tok)] + ([FAKE_BRIDGE] if cfg.fake_bridge else []) + [END]

    train_in, train_tgt = item_texts(vocab, dataset.train_inputs, target_tokens(dataset, dataset.train_inputs))
    train_items = [{"input_text": i, "target_text": t} for i, t in zip(train_in, train_tgt)]
    if cfg.include_atomic:  # every fact of f1 as a 2-token example, after the composed ones
        table = dataset.tables[dataset.task.table_of_hop(cfg.same_functions)[0]]
        pairs = decode(np.arange(table.size), n_tok, table.ndim)
        a_in, a_tgt = item_texts(vocab, pairs, table.reshape(-1, 1))
        train_items += [{"input_text": i, "target_text": t} for i, t in zip(a_in, a_tgt)]
    test_in, test_tgt = item_texts(vocab, dataset.test_inputs, target_tokens(dataset, dataset.test_inputs))
    test_items = [
        {"input_text": i, "target_text": t, "type": ty} for i, t, ty in zip(test_in, test_tgt, dataset.test_types.tolist())
    ]
    files = {
        "vocab.json": json.dumps(vocab, indent=2),
        "train.json": dumps_items(train_items),
        "test.json": dumps_items(test_items),
    }
    for hop, table_name in zip(dataset.task.hops, dataset.task.table_of_hop(cfg.same_functions)):
        table = dataset.tables[table_name]
        args = decode(np.arange(table.size), n_tok, table.ndim)
        f_in, f_tgt = item_texts(vocab, args, table.reshape(-1, 1))
        files[f"atomic_facts_{hop.primitive}.json"] = dumps_items(
            {"input_text": i, "target_text": t} for i, t in zip(f_in, f_tgt)
        )
    meta = {
        "generator": f"covlib {__version__}",
        "config": cfg.to_dict(),
        "command": generate_command(cfg),
        "n_eligible": dataset.eligible_count,
        "test_population": dataset.population,
    }
    files[META] = json.dumps(meta, indent=2)
    return files


def generate_command(cfg: DatasetConfig) -> str:
    """The `covlib generate` command line that rebuilds this config (written beside the data)."""
    task = f'--graph "{cfg.task}"' if is_formula(cfg.task) else cfg.task
    parts = [f"covlib generate {task} --num-tokens {cfg.num_tokens} --n-train {cfg.n_train}"]
    default = DatasetConfig(cfg.task, cfg.num_tokens, cfg.n_train)
    for name, flag in (("seed", "--seed"), ("seen_ratio", "--seen-ratio"), ("test_size_per_type", "--test-size-per-type")):
        if getattr(cfg, name) != getattr(default, name):
            parts.append(f"{flag} {getattr(cfg, name)}")
    for name in ("cot", "fake_bridge", "same_functions", "include_atomic"):
        if getattr(cfg, name):
            parts.append("--" + name.replace("_", "-"))
    if cfg.first_role_items:
        parts.append(f"--first-role-items {cfg.first_role_items}")
    if cfg.commutative:
        parts.append("--commutative " + " ".join(cfg.commutative))
    return " ".join(parts)


def save_dataset(dataset: Dataset, out_dir: str | Path) -> Path:
    """Write the dataset folder ``out_dir/<authors' name>`` atomically and return its path."""

    return write_folder_atomic(Path(out_dir) / dataset.config.folder_name, dataset_files(dataset))


def ensure_dataset(config: DatasetConfig, out_dir: str | Path | None = None) -> Path:
    """The folder for ``config`` under ``out_dir``: reused if it holds this exact config, else generated."""
    out_dir = Path(out_dir) if out_dir is not None else default_root()
    folder = out_dir / config.folder_name
    meta = folder / "covlib.json"
    with folder_lock(folder):  # two chapters run side by side may want the same dataset
        if meta.is_file():
            try:
                if json.loads(meta.read_text()).get("config") == config.to_dict():
                    return folder
            except json.JSONDecodeError:
                pass
        return save_dataset(generate(config), out_dir)


def eligible_count(task: str, N: int, seed: int, cot: bool = False) -> int:
    """The number of ID-eligible inputs of a cell's dataset (training examples can be at most this minus one)."""

    return generate(DatasetConfig(task, N, 1, seed=seed, test_size_per_type=0, cot=cot)).eligible_count
