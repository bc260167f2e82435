"""The authors' dataset folder format: read, validate and write it byte for byte."""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress, repeat
from json.encoder import encode_basestring_ascii as _quote
from pathlib import Path

import numpy as np

from covlib.base.errors import CovlibError

END = "</a>"


FAKE_BRIDGE = "</b>"


META = "covlib.json"


_TOKEN = re.compile(r"<[^<>]*>")


_ENTITY = re.compile(r"<t_(\d+)>")


def dumps_items(items: Iterable[dict[str, str]]) -> str:
    """Exactly what ``json.dumps(items, indent=2)`` gives for a list of flat str dicts, ~20x faster."""
    blocks = [
        "  {\n" + ",\n".join(f"    {_quote(k)}: {_quote(v)}" for k, v in item.items()) + "\n  }" for item in items
    ]
    return "[\n" + ",\n".join(blocks) + "\n]" if blocks else "[]"


def item_texts(vocab: list[str], prompts: np.ndarray, targets: np.ndarray) -> tuple[list[str], list[str]]:
    """input_text and target_text strings for token-id arrays (targets exclude the final </a>)."""
    table = np.array(vocab, dtype=object)
    inputs = ["".join(row) for row in table[prompts].tolist()]
    tails = ["".join(row) for row in table[targets].tolist()]
    return inputs, [i + t + END for i, t in zip(inputs, tails)]


@dataclass
class Split:
    """Items of one file (or one prompt length) as token ids; targets exclude the final </a>."""

    inputs: np.ndarray  # (n, m) int32
    targets: np.ndarray  # (n, L) int32: bridges (if CoT) then the answer
    types: np.ndarray | None = None  # (n,) str, test items only

    def __len__(self) -> int:
        return len(self.inputs)

    @property
    def answers(self) -> np.ndarray:
        return self.targets[:, -1]


@dataclass
class DatasetFolder:
    """A dataset folder as loaded from disk (the authors' format, any task)."""

    path: Path
    vocab: list[str]
    num_tokens: int
    train: Split  # the composed examples (the most common prompt length)
    test: Split
    train_extra: list[Split]  # training items with another prompt length, e.g. included atomic facts
    meta: dict | None  # covlib.json if covlib wrote the folder

    @property
    def n_inputs(self) -> int:
        return self.train.inputs.shape[1]

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def test_types(self) -> list[str]:
        """Test types in a reading order: train_inferred, type_0, type_1, ..."""
        found = set(self.test.types.tolist())
        return sorted(found, key=type_order)

    def atomic_facts(self) -> dict[str, Split]:
        """Every atomic_facts_f*.json in the folder, keyed by primitive name (f1, f2, ...)."""
        out = {}
        for file in sorted(self.path.glob("atomic_facts_f*.json")):
            out[file.stem.removeprefix("atomic_facts_")] = _parse_items(_read_json(file), self._token_ids(), file.name)
        return out

    def _token_ids(self) -> dict[str, int]:
        return {tok: i for i, tok in enumerate(self.vocab)}


def type_order(name: str) -> tuple:
    """Reading order of test types: train_inferred, type_0, type_1, ..., then anything else."""
    if name == "train_inferred":
        return (0, 0, name)
    m = re.fullmatch(r"type_(\d+)", name)
    return (1, int(m.group(1)), name) if m else (2, 0, name)


def _read_json(file: Path):
    try:
        with open(file, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise CovlibError(f"{file} is not valid JSON ({exc}); regenerate the dataset with `covlib generate`") from None


def _parse_uniform(raw: list, tok2id: dict[str, int], need_type: bool) -> Split | None:
    """The common case at the speed of one regex pass: every item well formed, all of one shape. None when any item
    is not (then _parse_items walks them one by one, to name the first bad one)."""
    try:
        inputs = [item["input_text"] for item in raw]
        targets = [item["target_text"] for item in raw]
        types = [item.get("type", "") for item in raw]
    except (TypeError, KeyError, AttributeError):
        return None
    # the checks run as map() over str methods, in C: item by item in Python they took most of a small folder's read
    if set(map(type, inputs)) | set(map(type, targets)) | set(map(type, types)) != {str} or (
            need_type and not all(types)):
        return None
    if not (all(map(str.startswith, targets, inputs)) and all(map(str.endswith, targets, repeat(END)))):
        return None
    answers = [t[len(i):-len(END)] for i, t in zip(inputs, targets)]
    if not all(answers):  # empty where the target is no longer than its input and the end token
        return None
    by_name = {t[1:-1]: i for t, i in tok2id.items() if len(t) >= 2 and t[0] == "<" and t[-1] == ">"}
    shaped = []
    for texts in (inputs, answers):
        joined = "".join(texts)
        counts = set(map(str.count, texts, repeat("<")))
        # every text begins and ends a token, so no token of the joined text spans two items
        bounded = all(map(str.startswith, texts, repeat("<"))) and all(map(str.endswith, texts, repeat(">")))
        if not bounded or len(counts) > 1:
            return None
        # split at "><" (3x faster than the token regex): n names with n "<" and n ">" in all means that no name
        # holds a bracket, so the text is tokens "<name>" end to end
        names = joined[1:-1].split("><")
        if not (len(names) == joined.count("<") == joined.count(">")):
            return None
        try:
            ids = np.fromiter(map(by_name.__getitem__, names), dtype=np.int32, count=len(names))
        except KeyError:  # a token vocab.json lacks: the item-by-item reader names it
            return None
        shaped.append(ids.reshape(len(texts), counts.pop()))
    return Split(inputs=shaped[0], targets=shaped[1],
                 types=np.array(types, dtype=str) if need_type or any(types) else None)


def _parse_items(raw, tok2id: dict[str, int], where: str, need_type: bool = False) -> Split:
    if not isinstance(raw, list):
        raise CovlibError(f"{where} must hold a JSON list of items, found {type(raw).__name__}")
    if raw and (fast := _parse_uniform(raw, tok2id, need_type)) is not None:
        return fast
    prompts, targets, types = [], [], []
    for idx, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("input_text"), str) or not isinstance(
            item.get("target_text"), str
        ):
            raise CovlibError(f"{where} item {idx} needs string fields input_text and target_text: {item!r:.120}")
        inp, tgt = item["input_text"], item["target_text"]
        if not tgt.startswith(inp) or not tgt.endswith(END) or len(tgt) <= len(inp) + len(END):
            raise CovlibError(
                f"{where} item {idx}: target_text must be input_text, then at least one token, then {END}; "
                f"got input {inp!r} and target {tgt!r}"
            )
        try:
            prompts.append([tok2id[t] for t in _tokens(inp)])
            targets.append([tok2id[t] for t in _tokens(tgt[len(inp) : -len(END)])])
        except KeyError as exc:
            raise CovlibError(f"{where} item {idx} uses token {exc.args[0]} that vocab.json does not list") from None
        kind = item.get("type", "")
        if not isinstance(kind, str) or (need_type and not kind):
            raise CovlibError(f"{where} item {idx} has no string 'type' field (train_inferred, type_0, ...)")
        types.append(kind)
    lengths = {(len(p), len(t)) for p, t in zip(prompts, targets)}
    if len(lengths) > 1:
        raise CovlibError(f"{where}: items have different (prompt, target) lengths {sorted(lengths)}; the dataset is inconsistent")
    shape = next(iter(lengths), (0, 1))
    return Split(
        inputs=np.array(prompts, dtype=np.int32).reshape(len(prompts), shape[0]),
        targets=np.array(targets, dtype=np.int32).reshape(len(targets), shape[1]),
        # The authors' train.json marks the items their script also put in test with a type
        # (a side effect of sharing dicts); keep such marks so that files round-trip exactly.
        types=np.array(types, dtype=str) if need_type or any(types) else None,
    )


def _tokens(text: str) -> list[str]:
    toks = _TOKEN.findall(text)
    if "".join(toks) != text:
        raise KeyError(repr(text))
    return toks


def _split_by_prompt_length(raw: list, where: str) -> list[list]:
    """Group items by the number of prompt tokens; the largest group comes first."""
    # a token is "<...>": its count is the count of "<"; counted in C where every item has a string input_text
    try:
        counts = list(map(str.count, [item["input_text"] for item in raw], repeat("<")))
    except (TypeError, KeyError):  # a malformed item goes to group -1, and is named when its group is read
        counts = [item["input_text"].count("<") if isinstance(item, dict) and isinstance(item.get("input_text"), str)
                  else -1 for item in raw]
    # groups in order of first appearance, so that ties sort the same way every time
    grouped = [list(compress(raw, map(n.__eq__, counts))) for n in dict.fromkeys(counts)]
    return sorted(grouped, key=len, reverse=True)


def load_dataset(path: str | os.PathLike) -> DatasetFolder:
    """Load and check a dataset folder; any problem raises CovlibError naming the file and the fix."""
    return load_dataset_items(path)[0]


def load_dataset_items(path: str | os.PathLike) -> tuple[DatasetFolder, list[dict]]:
    """``load_dataset``, with test.json's items as read (extra keys and all), for a command that annotates them
    without reading the file twice."""
    path = Path(path)
    if not path.is_dir():
        raise CovlibError(f"{path} is not a folder; pass a dataset folder made by `covlib generate`")
    missing = [f for f in ("vocab.json", "train.json", "test.json") if not (path / f).is_file()]
    if missing:
        raise CovlibError(f"{path} is not a dataset folder: it lacks {', '.join(missing)}; make one with `covlib generate`")
    vocab = _read_json(path / "vocab.json")
    if not isinstance(vocab, list) or not all(isinstance(t, str) for t in vocab) or len(set(vocab)) != len(vocab):
        raise CovlibError(f"{path / 'vocab.json'} must be a JSON list of distinct token strings")
    entities = [t for t in vocab if _ENTITY.fullmatch(t)]
    if not entities or END not in vocab:
        raise CovlibError(f"{path / 'vocab.json'} must list entity tokens <t_0>.. and the end token {END}")
    num_tokens = len(entities)
    if vocab[:num_tokens] != [f"<t_{i}>" for i in range(num_tokens)]:
        raise CovlibError(f"{path / 'vocab.json'} must start with <t_0> .. <t_{num_tokens - 1}> in order")
    tok2id = {t: i for i, t in enumerate(vocab)}

    raw_train = _read_json(path / "train.json")
    if not isinstance(raw_train, list) or not raw_train:
        raise CovlibError(f"{path / 'train.json'} must be a non-empty JSON list of items")
    groups = _split_by_prompt_length(raw_train, "train.json")
    train = _parse_items(groups[0], tok2id, "train.json")
    extra = [_parse_items(g, tok2id, "train.json") for g in groups[1:]]
    raw_test = _read_json(path / "test.json")
    test = _parse_items(raw_test, tok2id, "test.json", need_type=True)
    if len(test) and test.inputs.shape[1] != train.inputs.shape[1]:
        raise CovlibError(f"test.json prompts have {test.inputs.shape[1]} tokens but train.json's have {train.inputs.shape[1]}")
    _check_answers(train, test, num_tokens, path)
    meta = _read_json(path / META) if (path / META).is_file() else None
    return DatasetFolder(path, vocab, num_tokens, train, test, extra, meta), raw_test


def _check_answers(train: Split, test: Split, num_tokens: int, path: Path) -> None:
    """Answers must be entity tokens, and one input must never get two different targets."""
    for name, split in (("train.json", train), ("test.json", test)):
        bad = np.flatnonzero(split.answers >= num_tokens) if len(split) else []
        if len(bad):
            raise CovlibError(f"{path / name} item {bad[0]}: the answer (last token before {END}) is not an entity token")
    both = np.concatenate([train.inputs, test.inputs]) if len(test) else train.inputs
    tgts = np.concatenate([train.targets, test.targets]) if len(test) else train.targets
    # sort the items by input (a stable lexsort, 10x faster than np.unique over rows), then compare neighbours:
    # an input with two targets has two neighbours that differ in target alone
    order = np.lexsort(both.T[::-1]) if both.shape[1] else np.arange(len(both))
    both_sorted, tgts_sorted = both[order], tgts[order]
    same_input = (both_sorted[1:] == both_sorted[:-1]).all(axis=1)
    clash = np.flatnonzero(same_input & (tgts_sorted[1:] != tgts_sorted[:-1]).any(axis=1))
    if len(clash):
        i = int(clash[0])
        raise CovlibError(
            f"{path}: inconsistent targets: input {both_sorted[i].tolist()} appears with targets "
            f"{tgts_sorted[i].tolist()} and {tgts_sorted[i + 1].tolist()}; regenerate the dataset"
        )


def folder_files(folder: DatasetFolder) -> dict[str, str]:
    """A loaded folder's vocab, train and test files, re-encoded in the authors' exact layout."""
    train = [folder.train, *folder.train_extra]
    train_items = []
    for split in train:
        train_items += _items(folder.vocab, split)
    test_items = _items(folder.vocab, folder.test)
    return {
        "vocab.json": json.dumps(folder.vocab, indent=2),
        "train.json": dumps_items(train_items),
        "test.json": dumps_items(test_items),
    }


def _items(vocab: list[str], split: Split) -> list[dict[str, str]]:
    ins, tgts = item_texts(vocab, split.inputs, split.targets)
    kinds = split.types.tolist() if split.types is not None else [""] * len(ins)
    return [
        {"input_text": i, "target_text": t, **({"type": k} if k else {})} for i, t, k in zip(ins, tgts, kinds)
    ]
