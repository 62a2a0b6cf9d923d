"""The committed WordPiece vocabulary: its file is the vocabulary (sha256 recorded), its special tokens come first,
it encodes as BERT does ([CLS] ... [SEP], lower case), and remaking it under its name never changes it silently."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sentemb.errors import ConfigError, SentembError
from sentemb.pretrain import vocabulary


def test_the_committed_vocabulary_loads_with_berts_specials_first_and_its_sha256():
    tokenizer = vocabulary.load("wordpiece-8192")
    assert len(tokenizer) == 8192
    assert tokenizer.convert_ids_to_tokens(list(range(5))) == list(vocabulary.SPECIAL_TOKENS)
    ids = tokenizer("The Cat sat.")["input_ids"]
    assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
    assert tokenizer.decode(ids[1:-1]) == "the cat sat."
    assert tokenizer.pad_token_id == 0 and tokenizer.mask_token == "[MASK]"
    assert vocabulary.vocabulary_sha256("wordpiece-8192") == vocabulary.sha256(vocabulary.vocab_path("wordpiece-8192"))
    assert vocabulary.vocabulary_sha256(vocabulary.MINILM_VOCAB) is None
    assert "wordpiece-8192" in vocabulary.names()
    with pytest.raises(ConfigError, match="pretrain-vocab --size N"):
        vocabulary.load("wordpiece-123")


def test_a_trained_vocabulary_has_the_specials_and_wordpiece_continuations():
    texts = ["the cathedral of the city", "a cathedral and a castle", "castles and cities"] * 50
    tokenizer = vocabulary.train_wordpiece(texts, 300)
    assert [tokenizer.id_to_token(i) for i in range(5)] == list(vocabulary.SPECIAL_TOKENS)
    assert any(t.startswith("##") for t in tokenizer.get_vocab())
    assert tokenizer.encode("Castle").tokens[0] == "[CLS]"


def test_remaking_a_vocabulary_in_a_fresh_process_keeps_it_or_refuses(tmp_path):
    """The trainer need not give the same file in every process (its word counts live in hash maps filled on
    threads): so a remade file either equals the one made before or is refused, never written over it. On a small
    text, so that the fresh process trains in a second."""
    code = (
        "import sys; from pathlib import Path; from sentemb.pretrain import corpus, vocabulary\n"
        "from sentemb.errors import SentembError\n"
        "corpus.training_units = lambda unk='[UNK]': (['the castle of the city and its cathedral'] * 50, {})\n"
        "try:\n    vocabulary.make(300, Path(sys.argv[1]))\nexcept SentembError as e:\n    print(e); sys.exit(3)\n"
    )
    first = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    made = (tmp_path / "wordpiece-300.json").read_bytes()
    again = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert again.returncode in (0, 3), again.stderr
    if again.returncode == 3:
        assert "a vocabulary's name never changes its tokens" in again.stdout
    assert (tmp_path / "wordpiece-300.json").read_bytes() == made


def test_a_different_vocabulary_under_an_existing_name_is_refused_and_the_file_kept(tmp_path, monkeypatch):
    from sentemb.pretrain import corpus

    monkeypatch.setattr(corpus, "training_units", lambda unk="[UNK]": (["a small text of words"] * 20, {}))
    path = vocabulary.make(300, tmp_path)
    made = path.read_text()
    try:
        assert vocabulary.make(300, tmp_path) == path  # the same bytes again: kept
    except SentembError:  # the trainer gave other bytes (it does, even in one process): refused
        pass
    assert path.read_text() == made
    path.write_text("{}")
    with pytest.raises(SentembError, match="already holds another vocabulary"):
        vocabulary.make(300, tmp_path)
    assert path.read_text() == "{}"
