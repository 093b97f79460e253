"""Domain layer: the 13 game languages, their tiles, folding and keyboards (ruling 12).

Pure data and pure functions, stdlib only. A word is played in its *play form*: Unicode NFC,
lower case (German ß is kept, never turned into "ss"), then the language's folding (accents
stripped where the language's clones strip them, ё→е, Latin look-alikes → Kazakh Cyrillic,
Uzbek apostrophe variants → ʻ/ʼ, the Ukrainian apostrophe dropped: it is no tile). Length is
counted in *tiles*: one letter, except the Uzbek digraphs oʻ gʻ sh ch, which are one tile each.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from shared.domain.errors import UnknownLanguageError

__all__ = ["LANGUAGES", "LANGUAGE_CODES", "Language", "get_language"]

LANGUAGE_CODES: tuple[str, ...] = (
    "en",
    "id",
    "de",
    "es",
    "fr",
    "it",
    "nl",
    "uz",
    "pl",
    "pt",
    "kk",
    "ru",
    "uk",
)

_COMBINING_DIAERESIS = "\u0308"
_COMBINING_TILDE = "\u0303"

# Uzbek: every apostrophe-like mark a keyboard or a font may produce.
_UZ_APOSTROPHES = frozenset("'‘’ʻʼ`´ʹ′")
_UZ_OKINA = "ʻ"  # U+02BB, the "tutuq" of oʻ and gʻ
_UZ_TUTUQ = "ʼ"  # U+02BC, the glottal-stop letter (taʼlim)
_UZ_DIGRAPHS = ("oʻ", "gʻ", "sh", "ch")

# Ukrainian: every apostrophe-like mark a keyboard or a font may produce (U+02BC is the standard).
_UK_APOSTROPHES = _UZ_APOSTROPHES

# Kazakh: Latin letters that look like Cyrillic ones, as pasted or typed on a mixed keyboard.
# Upper-case ones are mapped before lower-casing, so that Latin "B" or "H" means В and Н.
_KK_LOOKALIKES_UPPER = str.maketrans(
    {
        "A": "А",
        "B": "В",
        "C": "С",
        "E": "Е",
        "H": "Н",
        "K": "К",
        "M": "М",
        "O": "О",
        "P": "Р",
        "T": "Т",
        "X": "Х",
        "Y": "У",
        "I": "І",
        "Ə": "Ә",
        "Ɵ": "Ө",
    }
)
_KK_LOOKALIKES_LOWER = str.maketrans(
    {
        "a": "а",
        "c": "с",
        "e": "е",
        "o": "о",
        "p": "р",
        "x": "х",
        "y": "у",
        "i": "і",
        "h": "һ",
        "k": "к",
        "ə": "ә",
        "ɵ": "ө",
        "ӏ": "і",
    }
)


def _lower(text: str, *, keep_sharp_s: bool) -> str:
    """NFC + case folding; with ``keep_sharp_s`` ß and ẞ become ß (casefold would give "ss")."""
    text = unicodedata.normalize("NFC", text)
    if keep_sharp_s:
        return "".join("ß" if ch in "ßẞ" else ch.casefold() for ch in text)
    return text.casefold()


def _strip_marks(text: str, keep: Callable[[str, str], bool] | None = None) -> str:
    """Remove combining marks after NFD, except those ``keep(base, mark)`` accepts; then NFC."""
    out: list[str] = []
    base = ""
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch):
            if keep is not None and keep(base, ch):
                out.append(ch)
            continue
        base = ch
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def _fold_plain(text: str) -> str:
    return _strip_marks(_lower(text, keep_sharp_s=False))


def _fold_de(text: str) -> str:
    return _strip_marks(
        _lower(text, keep_sharp_s=True),
        keep=lambda base, mark: mark == _COMBINING_DIAERESIS and base in "aou",
    )


def _fold_es(text: str) -> str:
    return _strip_marks(
        _lower(text, keep_sharp_s=False),
        keep=lambda base, mark: mark == _COMBINING_TILDE and base == "n",
    )


def _fold_fr(text: str) -> str:
    return _fold_plain(text).replace("œ", "oe").replace("æ", "ae")


def _fold_nl(text: str) -> str:
    # NFKC would also split ĳ, but it rewrites far more than we want; do it by hand.
    return _fold_plain(text).replace("ĳ", "ij")


def _fold_pl(text: str) -> str:
    return _lower(text, keep_sharp_s=False)


def _fold_ru(text: str) -> str:
    return _lower(text, keep_sharp_s=False).replace("ё", "е")


def _fold_uk(text: str) -> str:
    # The apostrophe (пам'ять, м'ясо, сім'я) is no tile: it is dropped, so such a word is typed
    # and played without it ("память"). The word lists accept these words as guesses and never
    # draw them as secrets, whose play form must be the word's own spelling.
    return "".join(ch for ch in _lower(text, keep_sharp_s=False) if ch not in _UK_APOSTROPHES)


def _fold_kk(text: str) -> str:
    text = unicodedata.normalize("NFC", text).translate(_KK_LOOKALIKES_UPPER)
    return _lower(text, keep_sharp_s=False).translate(_KK_LOOKALIKES_LOWER)


def _fold_uz(text: str) -> str:
    text = _strip_marks(_lower(text, keep_sharp_s=False))
    out: list[str] = []
    for ch in text:
        if ch in _UZ_APOSTROPHES:
            out.append(_UZ_OKINA if out and out[-1] in "og" else _UZ_TUTUQ)
        else:
            out.append(ch)
    return "".join(out)


def _split_letters(word: str) -> tuple[str, ...]:
    return tuple(word)


def _split_uz(word: str) -> tuple[str, ...]:
    tiles: list[str] = []
    i = 0
    while i < len(word):
        pair = word[i : i + 2]
        if pair in _UZ_DIGRAPHS:
            tiles.append(pair)
            i += 2
        else:
            tiles.append(word[i])
            i += 1
    return tuple(tiles)


@dataclass(frozen=True)
class Language:
    """One game language: its tiles, keyboard and the folding that gives a word's play form."""

    code: str
    """ISO 639-1 code, e.g. ``"de"``."""
    name: str
    """English name, e.g. ``"German"``."""
    native_name: str
    """The language's own name for itself, e.g. ``"Deutsch"``."""
    alphabet: tuple[str, ...]
    """Every tile a word may use, in the language's alphabetical order."""
    keyboard: tuple[tuple[str, ...], ...]
    """Rows of tiles for an on-screen keyboard in the native layout; each tile exactly once."""
    direction: str
    """Writing direction: ``"ltr"`` for all 13 languages."""
    _fold: Callable[[str], str] = field(repr=False, compare=False)
    _split: Callable[[str], tuple[str, ...]] = field(repr=False, compare=False)

    def normalise(self, text: str) -> str:
        """The play form of ``text``: NFC, lower case, then this language's folding."""
        return self._fold(text.strip())

    def tiles(self, word: str) -> tuple[str, ...]:
        """Split an already normalised word into tiles (Uzbek oʻ gʻ sh ch are one tile)."""
        return self._split(word)

    def is_spellable(self, word: str) -> bool:
        """Whether a normalised, non-empty word uses only this language's tiles."""
        alphabet = self._alphabet_set
        return bool(word) and all(tile in alphabet for tile in self._split(word))

    @property
    def _alphabet_set(self) -> frozenset[str]:
        return _ALPHABET_SETS[self.code]


def _letters(text: str) -> tuple[str, ...]:
    return tuple(text)


def _rows(*rows: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(row.split()) for row in rows)


_LATIN = _letters("abcdefghijklmnopqrstuvwxyz")
_QWERTY = _rows("q w e r t y u i o p", "a s d f g h j k l", "z x c v b n m")
_RU = _letters("абвгдежзийклмнопрстуфхцчшщъыьэюя")
_UK = _letters("абвгґдеєжзиіїйклмнопрстуфхцчшщьюя")
_KK = _letters("аәбвгғдеёжзийкқлмнңоөпрстуұүфхһцчшщъыіьэюя")
_PL = _letters("aąbcćdeęfghijklłmnńoópqrsśtuvwxyzźż")
_UZ = (
    *_letters("abdefghijklmnopqrstuvxyz"),
    "oʻ",
    "gʻ",
    "sh",
    "ch",
    "ʼ",
)

_ALL: tuple[Language, ...] = (
    Language("en", "English", "English", _LATIN, _QWERTY, "ltr", _fold_plain, _split_letters),
    Language(
        "id", "Indonesian", "Bahasa Indonesia", _LATIN, _QWERTY, "ltr", _fold_plain, _split_letters
    ),
    Language(
        "de",
        "German",
        "Deutsch",
        (*_LATIN, "ä", "ö", "ü", "ß"),
        _rows("q w e r t z u i o p ü", "a s d f g h j k l ö ä", "y x c v b n m ß"),
        "ltr",
        _fold_de,
        _split_letters,
    ),
    Language(
        "es",
        "Spanish",
        "Español",
        _letters("abcdefghijklmnñopqrstuvwxyz"),
        _rows("q w e r t y u i o p", "a s d f g h j k l ñ", "z x c v b n m"),
        "ltr",
        _fold_es,
        _split_letters,
    ),
    Language(
        "fr",
        "French",
        "Français",
        _LATIN,
        _rows("a z e r t y u i o p", "q s d f g h j k l m", "w x c v b n"),
        "ltr",
        _fold_fr,
        _split_letters,
    ),
    Language("it", "Italian", "Italiano", _LATIN, _QWERTY, "ltr", _fold_plain, _split_letters),
    Language("nl", "Dutch", "Nederlands", _LATIN, _QWERTY, "ltr", _fold_nl, _split_letters),
    Language(
        "uz",
        "Uzbek",
        "Oʻzbekcha",
        _UZ,
        _rows("q e r t y u i o p oʻ gʻ", "a s d f g h j k l ʼ", "z x v b n m sh ch"),
        "ltr",
        _fold_uz,
        _split_uz,
    ),
    Language(
        "pl",
        "Polish",
        "Polski",
        _PL,
        _rows(
            "ą ć ę ł ń ó ś ź ż",
            "q w e r t y u i o p",
            "a s d f g h j k l",
            "z x c v b n m",
        ),
        "ltr",
        _fold_pl,
        _split_letters,
    ),
    Language("pt", "Portuguese", "Português", _LATIN, _QWERTY, "ltr", _fold_plain, _split_letters),
    Language(
        "kk",
        "Kazakh",
        "Қазақша",
        _KK,
        _rows(
            "ә і ң ғ ү ұ қ ө һ",
            "й ц у к е н г ш щ з х ъ",
            "ф ы в а п р о л д ж э",
            "я ч с м и т ь б ю ё",
        ),
        "ltr",
        _fold_kk,
        _split_letters,
    ),
    Language(
        "ru",
        "Russian",
        "Русский",
        _RU,
        _rows("й ц у к е н г ш щ з х ъ", "ф ы в а п р о л д ж э", "я ч с м и т ь б ю"),
        "ltr",
        _fold_ru,
        _split_letters,
    ),
    Language(
        "uk",
        "Ukrainian",
        "Українська",
        _UK,
        _rows("й ц у к е н г ш щ з х ї", "ф і в а п р о л д ж є", "ґ я ч с м и т ь б ю"),
        "ltr",
        _fold_uk,
        _split_letters,
    ),
)

_ALPHABET_SETS: Mapping[str, frozenset[str]] = {
    lang.code: frozenset(lang.alphabet) for lang in _ALL
}

LANGUAGES: Mapping[str, Language] = MappingProxyType({lang.code: lang for lang in _ALL})


def get_language(code: str) -> Language:
    """The game language with this code; raises ``UnknownLanguageError`` for any other."""
    try:
        return LANGUAGES[code]
    except (KeyError, TypeError):
        raise UnknownLanguageError(f"unknown language {code!r}") from None
