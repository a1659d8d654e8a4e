"""Search's second stage: reorder the candidates recall found, by what each one is.

The feature reranker (always on, no model) reads, for every candidate: the first-stage score (fused
rank of the vector and full-text lists blended with confidence), what its path holds, whether it only
imports, whether it defines a name the query uses, and whether its code unit's name carries the
query's words. Its weights are named in rankpolicy. Same input, same order: no randomness, ties broken
by path and line.

The cross-encoder (off unless configured: `rerank_model` / HIPPO_RERANK_MODEL) reads the query and the
text of the top candidates together through fastembed's TextCrossEncoder and is blended with the
feature score. It needs the model on disk (or the hub), so it is only loaded when asked for.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from hippo.retrieval import rankpolicy as P

_SUFFIXES = ("ings", "ing", "ers", "er", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """saving -> sav, save -> sav, sessions -> session: enough to match a question's words to a name."""
    w = word.lower()
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w


def name_words(symbol: str) -> set[str]:
    """Stemmed words of a symbol's last part (`SessionStore.load_session` -> load, session)."""
    last = re.split(r"[.:#]", symbol)[-1]
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", last)
    return {stem(p) for p in parts if len(p) > 2}


@dataclass
class Features:
    """What the reranker knows about one candidate."""

    first: float  # first-stage score
    conf: float  # first-stage confidence (gates dynamic top-k)
    kind: str = "code"
    import_only: bool = False
    definition: float = 0.0  # 1: defines the name asked for; 0.5: a same-named member of another owner
    symbol_words: float = 0.0  # share of the query's words its code unit's name carries
    named: float = 0.0  # defines a name (any definition inside it) carrying the question's words (namematch)
    logic: int = -1  # lines that decide or do something (rankpolicy.logic_lines); -1: not counted


@dataclass
class Scored:
    final: float
    conf: float
    parts: dict[str, float] = field(default_factory=dict)


def score(f: Features, intent: P.Intent) -> Scored:
    """The reranker's score for one candidate (the sum of named parts, see rankpolicy)."""
    mult, conf_mult = P.kind_weights(f.kind, intent)
    final, conf = f.first * mult, f.conf * conf_mult
    if f.kind == "code" and intent.behaviour and f.logic >= 0 and not f.definition:
        mult *= P.logic_weight(f.logic)  # a how-question asks what code does, not what it declares
        final = f.first * mult
    if f.import_only and not f.definition:
        final *= P.IMPORT_ONLY
        conf *= P.IMPORT_ONLY_CONF
    bonus = 0.0
    if f.definition:
        if intent.symbol:
            bonus = P.DEFINITION_OF_SYMBOL_QUERY if f.definition >= 1 else P.DEFINITION_OF_OTHER_OWNER
        else:
            bonus = P.DEFINITION_IN_QUESTION * f.definition
        conf = max(conf, P.DEFINITION_CONF * f.definition * mult)
    if f.kind == "code" and intent.code_question:  # a code question, not pasted output
        bonus += P.SYMBOL_WORDS * f.symbol_words + P.NAMED_DEFINITION * f.named
        conf = max(conf, P.NAMED_CONF * f.named * mult)
    return Scored(final=final + bonus, conf=min(conf, 1.0), parts={"first": f.first, "kind": mult, "bonus": bonus})


def definition_strength(symbol: str, names: Sequence[str]) -> float:
    """1 when `symbol` defines one of `names` (whole or by its last part for a bare name), 0.5 when only the
    member matches another owner (`Other.send` for `Client.send`), else 0."""
    if not symbol or not names:
        return 0.0
    parts = {p.strip() for p in symbol.split(",") if p.strip()}
    best = 0.0
    for name in names:
        norm = name.replace("::", ".").replace("#", ".")
        tail = norm.rsplit(".", 1)[-1]
        for p in parts:
            ptail = p.rsplit(".", 1)[-1]
            if p == norm or (norm == tail and ptail == tail) or p.endswith("." + norm):
                return 1.0
            if ptail == tail and "." in norm:
                best = max(best, 0.5)
    return best


def words_in_name(symbol: str, query_stems: set[str]) -> float:
    """Share of a code unit's name words the query carries; a group of small definitions (`a, b, c`) is
    not one unit and gets none."""
    if not symbol or not query_stems or "," in symbol:
        return 0.0
    words = name_words(symbol)
    return len(words & query_stems) / len(words) if words else 0.0


class CrossEncoderReranker:
    """fastembed's TextCrossEncoder over (query, chunk text) pairs; scores squashed to 0..1.

    `model` is a fastembed model name, or a folder holding `model.onnx` + `tokenizer.json` (+ config files),
    registered with fastembed as a custom model so no download is needed."""

    def __init__(self, model: str, cache_dir: str | None = None, threads: int | None = None) -> None:
        from pathlib import Path

        from fastembed.rerank.cross_encoder import TextCrossEncoder

        folder = Path(model).expanduser()
        if folder.is_dir():
            name = _register_local(folder)
            self.engine = TextCrossEncoder(name, specific_model_path=str(folder), threads=threads)
        else:
            self.engine = TextCrossEncoder(model, cache_dir=cache_dir, threads=threads)
        self.model = model

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        import math
        import time

        started = time.perf_counter()
        raw = list(self.engine.rerank(query, list(texts), batch_size=16))
        if texts:
            _SPEED[self.model] = (time.perf_counter() - started) * 1000 / len(texts)
        return [1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, float(s))))) for s in raw]


def _register_local(folder) -> str:
    """Register a local ONNX cross-encoder folder with fastembed under a name derived from the folder."""
    from fastembed.common.model_description import ModelSource
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    name = f"local/{folder.name}"
    known = {m["model"] for m in TextCrossEncoder.list_supported_models()}
    if name not in known:
        TextCrossEncoder.add_custom_model(model=name, model_file="model.onnx", sources=ModelSource(hf=name),
                                          description="local cross-encoder", license="local", size_in_gb=0.0)
    return name


_LOADED: dict[str, CrossEncoderReranker] = {}
_SPEED: dict[str, float] = {}  # model -> milliseconds per (query, text) pair, last measured


def measured_ms_per_pair(model: str) -> float | None:
    """How fast the loaded model scored its last batch; None when it is not loaded (or never ran)."""
    return _SPEED.get(model) if model in _LOADED else None


def cross_encoder(model: str, cache_dir: str | None = None, threads: int | None = None) -> CrossEncoderReranker:
    """One loaded cross-encoder per model per process (the warm server keeps it)."""
    if model not in _LOADED:
        _LOADED[model] = CrossEncoderReranker(model, cache_dir=cache_dir, threads=threads)
    return _LOADED[model]
