"""Domain layer: how a nickname looks — its confusable skeleton, its scripts, its blank letters,
its marks and its display width (ruling 16). Pure functions over stdlib ``unicodedata``.

- ``skeleton``: the UTS #39 skeleton (NFD, each code point replaced by its prototype from
  ``confusables.txt``, NFD), from the generated table ``shared.domain.confusables_table``.
- ``lookalike_keys``: two names look alike when they share a key: the skeleton of the NFKC
  form case folded and skeletonized again, and the skeleton of the NFKC case folded form, each
  case folded (``ТОМАЅ`` in Cyrillic, ``T0mas`` and ``tomas`` share one).
- ``scripts``: the scripts of a word's letters, read from the first word of each letter's
  Unicode name (``LATIN``, ``CYRILLIC``, ``CJK`` = Han...), since the stdlib has no Script
  property; ``MODIFIER`` letters (Uzbek ``ʻ``), digits and marks belong to no script.
- ``is_mixed_script``: more than one script in a word, beyond the mixes UTS #39's Highly
  Restrictive level allows (Latin with Han and Hiragana/Katakana, Bopomofo or Hangul).
- ``is_blank``: a Default_Ignorable letter or mark (Hangul fillers U+115F, U+1160, U+3164,
  U+FFA0; variation selectors; U+034F...): invisible, so never part of a name.
- ``display_width``: columns a name takes: a mark 0; a character with a compatibility
  decomposition as wide as that decomposition (U+FDFA ``ﷺ`` is 18 letters long); East Asian
  Wide or Fullwidth 2; letters of the scripts drawn wider than an ideograph (cuneiform,
  Egyptian and Anatolian hieroglyphs) 3; anything else 1.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import cache

from shared.domain import confusables_table

__all__ = [
    "display_width",
    "is_blank",
    "is_mixed_script",
    "lookalike_keys",
    "nfkc_casefold",
    "scripts",
    "skeleton",
]

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt) in categories L* and M*; the Cf, Cc
# and Cn ones are refused as such by the nickname rules.
_BLANK_RANGES: tuple[tuple[int, int], ...] = (
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x115F, 0x1160),  # HANGUL CHOSEONG / JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ / AA
    (0x180B, 0x180D),  # MONGOLIAN FREE VARIATION SELECTOR ONE..THREE
    (0x180F, 0x180F),  # MONGOLIAN FREE VARIATION SELECTOR FOUR
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFE00, 0xFE0F),  # VARIATION SELECTOR-1..16
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xE0100, 0xE01EF),  # VARIATION SELECTOR-17..256
)

# Scripts whose letters are drawn wider than an ideograph (3 columns).
_EXTRA_WIDE_RANGES: tuple[tuple[int, int], ...] = (
    (0x12000, 0x1254F),  # Cuneiform, its numbers and punctuation, Early Dynastic Cuneiform
    (0x13000, 0x1345F),  # Egyptian Hieroglyphs and their format controls
    (0x14400, 0x1467F),  # Anatolian Hieroglyphs
)

# UTS #39 "Highly Restrictive": the script mixes that are one writing system.
_ALLOWED_MIXES: tuple[frozenset[str], ...] = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_SCRIPT_ALIASES = {"CJK": "HAN", "IDEOGRAPHIC": "HAN", "KATAKANA-HIRAGANA": "KATAKANA"}
_NO_SCRIPT = frozenset({"MODIFIER", "SMALL", "FULLWIDTH", "HALFWIDTH", "MATHEMATICAL"})


def _in(cp: int, ranges: Iterable[tuple[int, int]]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


@cache
def _prototypes() -> dict[int, str]:
    table: dict[int, str] = {}
    for entry in confusables_table.DATA.split():
        source, _, target = entry.partition("=")
        table[int(source, 16)] = "".join(chr(int(cp, 16)) for cp in target.split("."))
    return table


def nfkc_casefold(text: str) -> str:
    """``text`` NFKC normalized, case folded and normalized again (``𝗳ＵＣＫ`` → ``fuck``)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text``: NFD, each code point by its prototype, NFD."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", decomposed.translate(_prototypes()))


def lookalike_keys(text: str) -> frozenset[str]:
    """What ``text`` looks like: two nicknames sharing a key can pass for each other. Both
    cases count: a Cyrillic ``В`` looks like ``B`` but its lower case ``в`` like ``ʙ``."""
    as_typed = skeleton(skeleton(unicodedata.normalize("NFKC", text)).casefold()).casefold()
    return frozenset({as_typed, skeleton(nfkc_casefold(text)).casefold()})


def _script(char: str) -> str | None:
    if not unicodedata.category(char).startswith("L"):
        return None
    first = unicodedata.name(char, "").split(" ", 1)[0]
    if not first or first in _NO_SCRIPT:
        return None
    return _SCRIPT_ALIASES.get(first, first)


def scripts(word: str) -> frozenset[str]:
    """The scripts of the letters of ``word`` (upper-case Unicode name words, ``HAN`` for
    ideographs); digits, marks, punctuation and modifier letters have none."""
    return frozenset(s for s in map(_script, word) if s is not None)


def is_mixed_script(word: str) -> bool:
    """Whether ``word`` mixes scripts beyond one writing system (``fuсk`` with a Cyrillic
    ``с`` does; ``東京たろう`` and ``Oʻzbek`` do not)."""
    found = scripts(word)
    return len(found) > 1 and not any(found <= mix for mix in _ALLOWED_MIXES)


def is_blank(char: str) -> bool:
    """Whether ``char`` is a Default_Ignorable letter or mark: drawn as nothing."""
    return _in(ord(char), _BLANK_RANGES)


def _char_width(char: str) -> int:
    if unicodedata.category(char)[0] == "M" or is_blank(char):
        return 0
    compat = unicodedata.normalize("NFKC", char)
    if compat != char and len(compat) > 1:
        return sum(_char_width(c) for c in compat if c != char)
    if _in(ord(char), _EXTRA_WIDE_RANGES):
        return 3
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Columns ``text`` takes on screen (see the module docstring); ``BraveOtter42`` is 12,
    ``東京`` 4, ``ﷺ`` 18."""
    return sum(_char_width(c) for c in text)
