"""Benchmark: cold load time of each language's word list (goal < 30 ms each), through the
lexicon adapter's loader (``shared.adapters.lexicon.load_word_list``).

python -m infra.benchmarks.word_lists
"""

from __future__ import annotations

import time

from shared.adapters.lexicon import load_word_list
from shared.domain.languages import LANGUAGE_CODES


def main() -> int:
    load_word_list.cache_clear()
    total = 0.0
    for code in LANGUAGE_CODES:
        start = time.perf_counter()
        words = load_word_list(code)
        elapsed = (time.perf_counter() - start) * 1000
        total += elapsed
        size = sum(len(s) for s in words.allowed.values())
        print(f"{code}  {elapsed:6.1f} ms  ({size} allowed words)")
    print(f"all   {total:6.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
