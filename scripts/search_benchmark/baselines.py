"""Plain BM25 on a set of `sets.py`, as a new user of each library would run it: `rank_bm25`'s
`BM25Okapi` over lower-cased, whitespace-split text, and `bm25s` with its own tokenizer
(English stop words) and defaults. Each tool's text is what toolprism's search reads: its name,
description, and each parameter's name, description and listed values.

`python3 baselines.py SET.json` prints one JSON line per library: recall@1/5/10, nDCG@10 and
the mean time of a query.
"""

import json
import math
import sys
import time

import bm25s
from rank_bm25 import BM25Okapi


def document(tool: dict) -> str:
    parts = [tool["name"], tool["description"]]
    for name, description, values in tool["parameters"]:
        parts += [name, description, *values]
    return " ".join(parts)


def scores(ranked: list[list[int]], queries: list[dict]) -> dict:
    totals = {"recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.0, "ndcg@10": 0.0}
    for top, query in zip(ranked, queries):
        relevant = set(query["relevant"])
        for k in (1, 5, 10):
            totals[f"recall@{k}"] += len(relevant & set(top[:k])) / len(relevant)
        dcg = sum(1 / math.log2(i + 2) for i, tool in enumerate(top[:10]) if tool in relevant)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
        totals["ndcg@10"] += dcg / ideal
    return {name: round(100 * total / len(queries), 2) for name, total in totals.items()}


def main() -> None:
    data = json.load(open(sys.argv[1]))
    texts = [document(tool) for tool in data["tools"]]
    queries = data["queries"]

    okapi = BM25Okapi([text.lower().split() for text in texts])
    started = time.perf_counter()
    ranked = []
    for query in queries:
        got = okapi.get_scores(query["text"].lower().split())
        ranked.append(sorted(range(len(got)), key=lambda i: -got[i])[:10])
    took = (time.perf_counter() - started) / len(queries)
    print(json.dumps({"engine": "rank_bm25", "ms": round(took * 1e3, 3), **scores(ranked, queries)}))

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    started = time.perf_counter()
    ranked = []
    for query in queries:
        tokens = bm25s.tokenize([query["text"]], stopwords="en", show_progress=False)
        results, _ = retriever.retrieve(tokens, k=10, show_progress=False)
        ranked.append([int(i) for i in results[0]])
    took = (time.perf_counter() - started) / len(queries)
    print(json.dumps({"engine": "bm25s", "ms": round(took * 1e3, 3), **scores(ranked, queries)}))


if __name__ == "__main__":
    main()
