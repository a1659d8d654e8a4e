"""The optional cross-encoder: fastembed's TextCrossEncoder loading a tiny ONNX model built here (no
download), scoring (query, text) pairs, reordering search results, and staying out of a hook's budget
until it is loaded."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from fake_embedder import FakeEmbedder
from hippo.core.config import load_settings
from hippo.index.indexer import index_repo
from hippo.retrieval import rerank
from hippo.retrieval.search import Searcher
from repo_helpers import git

onnx = pytest.importorskip("onnx")
tokenizers = pytest.importorskip("tokenizers")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "how", "does", "retry", "work", "zebra", "delay", "the", "request"]
BOOSTED = "zebra"  # the only token the tiny model scores


def build_model(folder):
    """A cross-encoder whose logit is the number of BOOSTED tokens in the pair: a real ONNX graph
    (Gather -> Mul by the mask -> ReduceSum) behind a real tokenizer.json."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    folder.mkdir(parents=True)
    weights = np.zeros((len(VOCAB), 1), dtype=np.float32)
    weights[VOCAB.index(BOOSTED), 0] = 3.0
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["per_token"], axis=0),
         helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
         helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask3"]),
         helper.make_node("Mul", ["per_token", "mask3"], ["masked"]),
         helper.make_node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),
         helper.make_node("Sub", ["summed", "bias"], ["logits"])],
        "tiny_cross_encoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        [numpy_helper.from_array(weights, "table"), numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
         numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
         numpy_helper.from_array(np.array([1.0], dtype=np.float32), "bias")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 64, "pad_token": "[PAD]"}))
    (folder / "special_tokens_map.json").write_text(json.dumps({"pad_token": "[PAD]", "unk_token": "[UNK]"}))
    (folder / "config.json").write_text(json.dumps({"pad_token_id": 0}))
    return folder


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_model(tmp_path_factory.mktemp("ce") / "tiny-ce")


def test_loader_scores_pairs_with_the_built_model(model_dir):
    enc = rerank.CrossEncoderReranker(str(model_dir))
    scores = enc.scores("how does retry work", ["the retry delay", "zebra zebra request", "zebra"])
    assert scores[1] > scores[2] > scores[0]
    assert all(0.0 < s < 1.0 for s in scores)
    assert rerank.CrossEncoderReranker(str(model_dir)).scores("retry", ["zebra"]) == pytest.approx([scores[2]])


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("cerepo") / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text(
        "def retry_delay(attempt):\n    # how the retry delay grows: the retry delay doubles per retry\n"
        "    return 2 ** attempt\n\n\ndef retry_request(send, attempts):\n    for n in range(attempts):\n"
        "        if send():\n            return True\n        sleep(retry_delay(n))\n    return False\n")
    (root / "src" / "zoo.py").write_text("def zebra_list():\n    # zebra zebra zebra: one delay\n    return 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial")
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    return root, emb


def test_configured_cross_encoder_reorders_results(repo, model_dir):
    root, emb = repo
    plain = Searcher(root, embedder=emb).search("how does the retry delay work")
    assert [h.path for h in plain.hits] == ["src/retry.py"]
    settings = replace(load_settings(root), rerank_model=str(model_dir))
    ranked = Searcher(root, settings, embedder=emb).search("how does the retry delay work")
    assert ranked.hits[0].path == "src/zoo.py"  # the tiny model only likes zebras


def test_a_hook_budget_never_loads_the_model(repo, model_dir, monkeypatch):
    root, emb = repo
    monkeypatch.setattr(rerank, "_LOADED", {})
    monkeypatch.setattr(rerank, "_SPEED", {})
    settings = replace(load_settings(root), rerank_model=str(model_dir))
    within = Searcher(root, settings, embedder=emb).search("how does the retry delay work", rerank_ms=1000)
    assert within.hits[0].path == "src/retry.py"  # not loaded: the feature ranking stands
    assert rerank._LOADED == {}
    Searcher(root, settings, embedder=emb).search("how does the retry delay work")  # loads and measures it
    again = Searcher(root, settings, embedder=emb).search("how does the retry delay work", rerank_ms=1000)
    assert again.hits[0].path == "src/zoo.py"


def test_rerank_model_is_environment_only(tmp_path):
    (tmp_path / "hippo.toml").write_text('rerank_model = "some/model"\n')
    assert load_settings(tmp_path, env={}).rerank_model == ""
    assert load_settings(tmp_path, env={"HIPPO_RERANK_MODEL": "some/model"}).rerank_model == "some/model"


def test_a_bert_shaped_cross_encoder_loads_and_scores(tmp_path):
    """The loader on a real cross-encoder graph (embeddings, attention layers, pooler, one-logit head) behind
    the vendored uncased tokenizer, as bench/crossencoder.py builds it at full size to time it."""
    from bench.crossencoder import build

    folder = build(tmp_path / "bert-ce", layers=2, hidden=32, heads=2, intermediate=64)
    enc = rerank.CrossEncoderReranker(str(folder))
    texts = ["def retry(request):\n    return send(request)", "the zebra crossing", ""]
    scores = enc.scores("how does retry work", texts)
    assert len(scores) == 3 and all(0.0 < s < 1.0 for s in scores)
    assert len(set(scores)) == 3  # the text reaches the logit
    assert enc.scores("how does retry work", texts[:1]) == pytest.approx(scores[:1], abs=1e-5)
