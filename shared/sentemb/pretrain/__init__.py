"""MLM pretraining of a small BERT from the mirror's own training text (``python -m sentemb pretrain``).

configs  the named model sizes and the run's settings (light: no torch, no transformers; the CLI reads it)
corpus   the training text (no evaluation text, no WikiText-2 valid/test) and the held-out text, packed
model    BertForMaskedLM from a named size, seeded masking, the loss on the masked positions only
run      the loop: AdamW, warm-up and linear decay, bf16 on CUDA, resumable, a checkpoint and a JSON record
"""
