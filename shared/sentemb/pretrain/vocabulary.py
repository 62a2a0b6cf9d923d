"""A WordPiece vocabulary trained on the pretraining text alone, committed once and named by its size.

Why: a vocabulary fitted to the text a small model sees is cheaper per token of that text (the MLM head, half of a
``mini`` step's time, scales with it) and each subword is seen more often (BabyBERTa: 8,192 tokens for 5 M words;
ELC-BERT, the BabyLM 2023 winner: 6,144 trained on its 10 M words). MiniLM's uncased BERT vocabulary has 30,522.

What: the ``tokenizers`` library's WordPiece trainer over :func:`sentemb.pretrain.corpus.training_units` (the
decontaminated training text; WikiText-2 valid and test and every evaluation set never), with BERT's uncased
normaliser (lower case, accents stripped, Chinese characters spaced) and pre-tokeniser, the five special tokens
first ([PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4), ``##`` continuations, and ``[CLS] A [SEP]`` as the
post-processor; wrapped as transformers' ``BertTokenizerFast``.

Where: ``shared/sentemb/pretrain/vocabularies/wordpiece-<size>.json`` (the ``tokenizers`` file), made by
``python -m sentemb pretrain-vocab --size N`` and committed. A run names it (``--vocab wordpiece-8192``), its sha256
is recorded, and a run never trains one implicitly: the trainer is not promised to give the same file in every
process (it counts words in hash maps, on threads), so the committed file is the vocabulary, and remaking one under
an existing name is refused when it differs (``tests/test_pretrain_vocabulary.py`` checks two fresh processes).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from sentemb.errors import ConfigError, SentembError

MINILM_VOCAB = "bert-uncased"  # all-MiniLM-L6-v2's (BERT's uncased WordPiece, 30,522 tokens)
DIRECTORY = Path(__file__).resolve().parent / "vocabularies"
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
PREFIX = "wordpiece-"


def vocab_path(name: str, directory: Path | None = None) -> Path:
    return (directory or DIRECTORY) / f"{name}.json"


def names(directory: Path | None = None) -> list[str]:
    """The vocabulary names a run can use: MiniLM's and every committed WordPiece file."""
    found = sorted(p.stem for p in (directory or DIRECTORY).glob(f"{PREFIX}*.json"))
    return [MINILM_VOCAB, *found]


def train_wordpiece(texts: list[str], size: int):
    """A ``tokenizers.Tokenizer``: WordPiece of ``size`` tokens (specials included) trained on ``texts``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, clean_text=True, handle_chinese_chars=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    trainer = trainers.WordPieceTrainer(
        vocab_size=size, special_tokens=list(SPECIAL_TOKENS), continuing_subword_prefix="##", show_progress=False
    )
    tokenizer.train_from_iterator(texts, trainer=trainer, length=len(texts))
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tokenizer


def make(size: int, directory: Path | None = None) -> Path:
    """Train ``wordpiece-<size>`` on the pretraining text and write it; the file. An existing file with the same
    bytes is kept; one with other bytes is refused (a name never changes its vocabulary)."""
    from sentemb.pretrain.corpus import training_units

    if size < 256:
        raise ConfigError(f"--size {size}: a WordPiece vocabulary needs at least 256 tokens")
    units, _ = training_units("[UNK]")
    text = train_wordpiece(units, size).to_str(pretty=True) + "\n"
    path = vocab_path(f"{PREFIX}{size}", directory)
    if path.is_file() and path.read_text() != text:
        raise SentembError(
            f"{path} already holds another vocabulary (sha256 {sha256(path)[:12]}); a vocabulary's name never "
            "changes its tokens.\n  Fix: keep the committed file (git checkout it), or delete it to make a new one."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(name: str, directory: Path | None = None):
    """The transformers tokenizer of vocabulary ``name``: MiniLM's (``bert-uncased``) or a committed WordPiece."""
    if name == MINILM_VOCAB:
        from sentemb.models.backbone import MINILM, load_tokenizer

        return load_tokenizer(MINILM)
    path = vocab_path(name, directory)
    if not path.is_file():
        raise ConfigError(
            f"vocabulary {name!r} is not committed ({path} is missing); choose from {', '.join(names(directory))}.\n"
            f"  Fix: python -m sentemb pretrain-vocab --size N makes {PREFIX}N from the pretraining text"
        )
    import transformers

    return transformers.BertTokenizerFast(
        tokenizer_file=str(path),
        do_lower_case=True,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        model_max_length=512,
    )


def vocabulary_sha256(name: str, directory: Path | None = None) -> str | None:
    """The committed file's sha256 (None for MiniLM's, which its package pins)."""
    return None if name == MINILM_VOCAB else sha256(vocab_path(name, directory))
