"""Levers on tool search's ranking, measured on the sets of `sets.py` (docs/performance.md,
"How well it finds"). A copy of toolprism's BM25 in Python (`runtime/src/search.rs`: its
words, its weights, its variants of a word the tools lack) ranks every query as the engine
does (`search_quality` prints the same figures for these sets; Python's and Rust's notions of a
letter differ for some combining marks, which these sets' text does not hold); each lever
changes one thing of it.

`python3 levers.py DIR` prints one JSON line per lever and set: recall@1/5/10; and, once
`search-benchmark` has had the model embed a set (`SET.vectors.json`), the weights of meaning
against words.
"""

import bisect
import collections
import json
import math
import sys

K1, B = 1.5, 0.75
MAX_QUERY_WORDS = 64


def stem(word: str) -> str:
    # Lengths in UTF-8 bytes, as Rust's `str::len`.
    size = len(word.encode())
    if size > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if size > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """`search::words`: lower-cased, split at non-alphanumerics and `camelCase`, plurals off."""
    out, current, previous_lower = [], [], False

    def flush() -> None:
        if len(current) > 1:
            out.append(stem("".join(current)))
        current.clear()

    for ch in text:
        if ch.isalnum():
            if ch.isupper() and previous_lower:
                flush()
            previous_lower = ch.islower() or (ch.isascii() and ch.isdigit())
            current.append(ch.lower())
        else:
            previous_lower = False
            flush()
    flush()
    return out


def tool_names(tools: list[dict]) -> list[str]:
    """Each tool's name as `search_quality` registers it: `[A-Za-z0-9_-]`, at most 58 characters,
    `_2`, `_3`… after one taken."""
    taken, names = set(), []
    for tool in tools:
        kept = (c if (c.isascii() and c.isalnum()) or c == "-" else "_" for c in tool["name"])
        base = "".join(kept)[:58]
        name, n = base, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        names.append(name)
    return names


def searchable_text(tool: dict, name: str, listed: bool = True) -> str:
    """What `search_quality` registers and the engine reads: the name twice, the description,
    each parameter's name, description and listed values (not with `listed=False`)."""
    description = tool["description"] if tool["description"].strip() else tool["name"]
    text = f"{name} {name} {description}"
    for parameter, about, values in sorted(tool["parameters"]):
        text += f" {parameter} {about or ''}"
        if listed:
            text += "".join(f" {value}" for value in values)
    return text


def shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class Index:
    def __init__(self, tools: list[dict], listed: bool = True):
        named = zip(tools, tool_names(tools))
        docs = [words(searchable_text(tool, name, listed)) for tool, name in named]
        self.lengths = [len(doc) for doc in docs]
        self.average = sum(self.lengths) / len(docs)
        self.postings = collections.defaultdict(list)
        for at, doc in enumerate(docs):
            for word, count in collections.Counter(doc).items():
                self.postings[word].append((at, count))
        self.vocabulary = sorted(self.postings)
        self.count = len(tools)
        self.associated = None

    def idf(self, word: str) -> float:
        frequency = len(self.postings[word])
        return math.log((self.count - frequency + 0.5) / (frequency + 0.5) + 1)

    def variants(self, word, least=4, share=0.75, most=3, scan=32):
        """`ToolIndex::variants`: the words sharing the longest start with `word`."""
        if len(word) < least:
            return []
        at = bisect.bisect_left(self.vocabulary, word)
        near = [self.vocabulary[i] for i in (at - 1, at) if 0 <= i < len(self.vocabulary)]
        longest = max((shared_prefix(word, known) for known in near), default=0)
        if longest < least:
            return []
        first = at
        while (first > 0 and at - first < scan
               and shared_prefix(word, self.vocabulary[first - 1]) == longest):
            first -= 1
        found = []
        for known in self.vocabulary[first:first + 2 * scan]:
            if shared_prefix(word, known) != longest:
                break
            if longest >= share * min(len(word), len(known)):
                found.append(known)
                if len(found) == most:
                    break
        return found

    def associations(self, most: int) -> dict:
        """Each word's most associated words across the tools (normalized PMI, words of two
        tools or more, pairs met in two tools or more)."""
        if self.associated is None:
            tools_of = {w: {at for at, _ in p} for w, p in self.postings.items() if len(p) >= 2}
            words_of = collections.defaultdict(list)
            for word, tools in tools_of.items():
                for at in tools:
                    words_of[at].append(word)
            self.associated = {}
            for word, tools in tools_of.items():
                met = collections.Counter()
                for at in tools:
                    met.update(words_of[at])
                ranked = []
                for other, both in met.items():
                    if other == word or both < 2:
                        continue
                    pmi = math.log(both * self.count / (len(tools) * len(tools_of[other])))
                    ranked.append((pmi / -math.log(both / self.count), other))
                ranked.sort(reverse=True)
                self.associated[word] = ranked
        return {word: ranked[:most] for word, ranked in self.associated.items()}

    def rank(self, terms: dict) -> list[int]:
        scores = self.scores(terms)
        return [at for at, _ in sorted(scores.items(), key=lambda s: (-s[1], s[0]))[:10]]

    def scores(self, terms: dict) -> dict:
        scores = collections.defaultdict(float)
        for word, weight in terms.items():
            if word not in self.postings:
                continue
            idf = self.idf(word)
            for at, count in self.postings[word]:
                norm = K1 * (1 - B + B * self.lengths[at] / self.average)
                scores[at] += weight * idf * count * (K1 + 1) / (count + norm)
        return scores


def distinct(query: str) -> list[str]:
    seen = []
    for word in words(query):
        if len(seen) == MAX_QUERY_WORDS:
            break
        if word not in seen:
            seen.append(word)
    return seen


def with_variants(weight=0.5, **shape):
    def terms(index: Index, query: str) -> dict:
        own = distinct(query)
        found = {word: 1.0 for word in own if word in index.postings}
        for word in own:
            if word in index.postings:
                continue
            for variant in index.variants(word, **shape):
                found.setdefault(variant, weight)
        return found

    return terms


def without_variants(index: Index, query: str) -> dict:
    return {word: 1.0 for word in distinct(query) if word in index.postings}


def with_associated(most: int, weight: float):
    """What ships, and for each word of it the words met with it most across the tools."""

    def terms(index: Index, query: str) -> dict:
        found = with_variants()(index, query)
        associated = index.associations(most)
        added = {}
        for word in found:
            for strength, other in associated.get(word, []):
                if other not in found:
                    added[other] = max(added.get(other, 0.0), weight * strength)
        return {**found, **added}

    return terms


LEVERS = {
    "what ships": with_variants(),
    "no variants of words the tools lack": without_variants,
    "variants: 5 letters shared": with_variants(least=5),
    "variants: 0.6 of the shorter word": with_variants(share=0.6),
    "variants: 0.9 of the shorter word": with_variants(share=0.9),
    "variants: the closest one": with_variants(most=1),
    "variants weighted 1": with_variants(weight=1.0),
    "associated words, 2 per word, weighted 0.1": with_associated(2, 0.1),
    "associated words, 2 per word, weighted 0.3": with_associated(2, 0.3),
}


def by_meaning(weight: float):
    """`ToolIndex::search_with_meaning`: `weight` times each tool's cosine with the query, plus
    the rest times its BM25 score over the best tool's (the engine keeps vectors in 8 bits; its
    recall@5 on these sets is the same to the hundredth)."""

    def rank(index: Index, vectors: dict, query: str) -> list[int]:
        words = index.scores(with_variants()(index, query))
        best = max(words.values(), default=0.0)
        tools, asked = vectors["tools"], vectors["queries"][query]
        scores = [weight * sum(x * y for x, y in zip(tool, asked)) for tool in tools]
        for at, score in words.items():
            scores[at] += (1 - weight) * score / best
        return sorted(range(len(scores)), key=lambda at: (-scores[at], at))[:10]

    return rank


MEANING_LEVERS = {
    "by meaning and words, meaning weighted 0.5": by_meaning(0.5),
    "by meaning and words, meaning weighted 0.6": by_meaning(0.6),
    "by meaning and words, meaning weighted 0.7 (what ships)": by_meaning(0.7),
    "by meaning and words, meaning weighted 0.8": by_meaning(0.8),
    "by meaning and words, meaning weighted 0.9": by_meaning(0.9),
    "by the model's vectors alone": by_meaning(1.0),
}


def model_vectors(path: str, tools: int) -> dict | None:
    """The vectors `search-benchmark` had the model give (its tools' texts first), scaled to
    length 1, or None before its first run."""
    try:
        with open(path) as file:
            data = json.load(file)
    except FileNotFoundError:
        return None

    def unit(vector: list[float]) -> list[float]:
        length = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / length for x in vector]

    vectors = [unit(vector) for vector in data["vectors"]]
    return {"tools": vectors[:tools], "queries": dict(zip(data["texts"][tools:], vectors[tools:]))}


def recall(index: Index, queries: list[dict], terms, vectors=None) -> dict:
    totals = {1: 0.0, 5: 0.0, 10: 0.0}
    for query in queries:
        if vectors is None:
            top = index.rank(terms(index, query["text"]))
        else:
            top = terms(index, vectors, query["text"])
        relevant = set(query["relevant"])
        for k in totals:
            totals[k] += len(relevant & set(top[:k])) / len(relevant)
    return {f"recall@{k}": round(100 * t / len(queries), 2) for k, t in totals.items()}


def main() -> None:
    for name in ("tune", "report", "mcp"):
        data = json.load(open(f"{sys.argv[1]}/{name}.json"))
        index = Index(data["tools"])
        for lever, terms in LEVERS.items():
            found = recall(index, data["queries"], terms)
            print(json.dumps({"set": name, "lever": lever, **found}), flush=True)
        unlisted = Index(data["tools"], listed=False)
        for lever, terms in {
            "parameters' listed values left out": with_variants(),
            "neither listed values nor variants": without_variants,
        }.items():
            found = recall(unlisted, data["queries"], terms)
            print(json.dumps({"set": name, "lever": lever, **found}), flush=True)
        vectors = model_vectors(f"{sys.argv[1]}/{name}.vectors.json", len(data["tools"]))
        for lever, rank in MEANING_LEVERS.items() if vectors else ():
            found = recall(index, data["queries"], rank, vectors)
            print(json.dumps({"set": name, "lever": lever, **found}), flush=True)


if __name__ == "__main__":
    main()
