"""Language rules: codes, alphabets, keyboards, normalisation and tiles for the 13 languages."""

from __future__ import annotations

import dataclasses
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.domain.errors import UnknownLanguageError
from shared.domain.languages import (
    LANGUAGE_CODES,
    LANGUAGES,
    Language,
    _letters,
    _rows,
    get_language,
)


def test_the_thirteen_codes_in_order() -> None:
    assert LANGUAGE_CODES == (
        "en", "id", "de", "es", "fr", "it", "nl", "uz", "pl", "pt", "kk", "ru", "uk",
    )  # fmt: skip
    assert tuple(LANGUAGES) == LANGUAGE_CODES


def test_unknown_language_is_a_domain_error() -> None:
    with pytest.raises(UnknownLanguageError) as err:
        get_language("xx")
    assert err.value.code == "unknown_language"


@pytest.mark.parametrize("code", LANGUAGE_CODES)
def test_keyboard_holds_every_tile_exactly_once(code: str) -> None:
    lang = get_language(code)
    keys = [key for row in lang.keyboard for key in row]
    assert sorted(keys) == sorted(lang.alphabet)
    assert len(set(lang.alphabet)) == len(lang.alphabet)
    assert lang.direction == "ltr"
    assert lang.code == code
    assert lang.name
    assert lang.native_name


def test_language_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_language("en").code = "xx"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("code", "size"),
    [
        ("en", 26),
        ("de", 30),
        ("es", 27),
        ("pl", 35),
        ("ru", 32),
        ("uk", 33),
        ("kk", 42),
        ("uz", 29),
    ],
)
def test_alphabet_sizes(code: str, size: int) -> None:
    assert len(get_language(code).alphabet) == size


NORMALISATION = [
    # German: ß stays one tile (never SS), umlauts kept, other accents folded.
    ("de", "STRAẞE", "straße"),
    ("de", "Straße", "straße"),
    ("de", "Mädchen", "mädchen"),
    ("de", "ÜBER", "über"),
    ("de", "Café", "cafe"),
    # Spanish: ñ kept, other accents and ü folded.
    ("es", "Niño", "niño"),
    ("es", "ÁRBOL", "arbol"),
    ("es", "pingüino", "pinguino"),
    ("es", "nino", "nino"),
    # French: all accents and ç folded, œ and æ split.
    ("fr", "Œuvre", "oeuvre"),
    ("fr", "cœur", "coeur"),
    ("fr", "Ça", "ca"),
    ("fr", "élève", "eleve"),
    ("fr", "ex æquo", "ex aequo"),
    # Italian and Portuguese: accents and ç folded.
    ("it", "Perché", "perche"),
    ("pt", "Ação", "acao"),
    # English and Indonesian: accents folded.
    ("en", "Naïve", "naive"),
    ("id", "Rumah", "rumah"),
    # Dutch: ĳ ligature becomes i + j.
    ("nl", "ĳs", "ijs"),
    ("nl", "Ĳsland", "ijsland"),
    ("nl", "café", "cafe"),
    # Polish: nothing folded, ł kept.
    ("pl", "Łódź", "łódź"),
    ("pl", "ŻÓŁW", "żółw"),
    # Russian: ё spelt е.
    ("ru", "Ёлка", "елка"),
    ("ru", "ЁЖ", "еж"),
    # Ukrainian: ї є ґ kept.
    ("uk", "Їжак", "їжак"),
    ("uk", "ҐАНОК", "ґанок"),
    ("uk", "Єдність", "єдність"),
    # Ukrainian: the apostrophe is no tile, every variant of it is dropped.
    ("uk", "Пам'ять", "память"),
    ("uk", "м’ясо", "мясо"),
    ("uk", "сімʼя", "сімя"),
    # Kazakh: Cyrillic kept, Latin look-alikes mapped to Cyrillic.
    ("kk", "Әке", "әке"),
    ("kk", "Ұлт", "ұлт"),
    ("kk", "Үй", "үй"),
    ("kk", "əке", "әке"),  # Latin schwa
    ("kk", "Kітaп", "кітап"),  # Latin K and a
    ("kk", "TAУ", "тау"),  # Latin T and A
    # Uzbek: every apostrophe variant becomes ʻ after o/g, ʼ elsewhere.
    ("uz", "O'zbek", "oʻzbek"),
    ("uz", "o‘zbek", "oʻzbek"),
    ("uz", "G’isht", "gʻisht"),
    ("uz", "gʻisht", "gʻisht"),
    ("uz", "ma'no", "maʼno"),
    ("uz", "ma`no", "maʼno"),
    ("uz", "SHAHAR", "shahar"),
]


@pytest.mark.parametrize(("code", "text", "expected"), NORMALISATION)
def test_normalise(code: str, text: str, expected: str) -> None:
    lang = get_language(code)
    assert lang.normalise(text) == expected
    assert lang.normalise(expected) == expected  # idempotent


TILES = [
    ("de", "straße", ("s", "t", "r", "a", "ß", "e")),
    ("es", "niño", ("n", "i", "ñ", "o")),
    ("nl", "ijs", ("i", "j", "s")),
    ("uz", "oʻzbek", ("oʻ", "z", "b", "e", "k")),
    ("uz", "gʻisht", ("gʻ", "i", "sh", "t")),
    ("uz", "choy", ("ch", "o", "y")),
    ("uz", "shahar", ("sh", "a", "h", "a", "r")),
    ("uz", "ming", ("m", "i", "n", "g")),  # ng is two tiles
    ("uz", "maʼno", ("m", "a", "ʼ", "n", "o")),
    ("uz", "isʼhoq", ("i", "s", "ʼ", "h", "o", "q")),  # ʼ keeps s and h apart
    ("kk", "әке", ("ә", "к", "е")),
    ("ru", "книга", ("к", "н", "и", "г", "а")),
]


@pytest.mark.parametrize(("code", "word", "expected"), TILES)
def test_tiles(code: str, word: str, expected: tuple[str, ...]) -> None:
    lang = get_language(code)
    assert lang.tiles(word) == expected
    assert lang.is_spellable(word)


SPELLABLE = [
    ("es", "niño", True),
    ("en", "niño", False),
    ("de", "über", True),
    ("fr", "über", False),
    ("ru", "ёлка", False),  # only the normalised form is playable
    ("ru", "елка", True),
    ("uk", "ёлка", False),
    ("uk", "м'ята", False),  # the apostrophe is no tile: only "мята" (normalised) is spellable
    ("uk", "мята", True),
    ("it", "l'acqua", False),
    ("pl", "łódź", True),
    ("kk", "kітап", False),  # un-normalised Latin k
    ("uz", "cola", False),  # c alone is no Uzbek tile
    ("uz", "", False),
    ("ru", "hello", False),
]


@pytest.mark.parametrize(("code", "word", "expected"), SPELLABLE)
def test_is_spellable(code: str, word: str, expected: bool) -> None:
    assert get_language(code).is_spellable(word) is expected


def test_languages_mapping_is_read_only() -> None:
    with pytest.raises(TypeError):
        LANGUAGES["xx"] = get_language("en")  # type: ignore[index]
    assert all(isinstance(lang, Language) for lang in LANGUAGES.values())


_MARKS = {
    "\u0300": "grave",
    "\u0301": "acute",
    "\u0302": "circumflex",
    "\u0303": "tilde",
    "\u0308": "diaeresis",
    "\u030a": "ring",
    "\u030c": "caron",
    "\u0327": "cedilla",
}


@given(base=st.sampled_from("abcdefghijklmnopqrstuvwxyz"), mark=st.sampled_from(sorted(_MARKS)))
def test_german_keeps_only_the_umlauts(base: str, mark: str) -> None:
    """Ruling 12 for German: ä ö ü keep their dots (they are tiles of their own); every other
    accent, and dots on any other letter, fold away."""
    kept = mark == "\u0308" and base in "aou"
    expected = unicodedata.normalize("NFC", base + mark) if kept else base
    assert get_language("de").normalise(base + mark) == expected
    assert get_language("de").normalise((base + mark).upper()) == expected


@given(base=st.sampled_from("abcdefghijklmnopqrstuvwxyz"), mark=st.sampled_from(sorted(_MARKS)))
def test_spanish_keeps_only_the_tilde_of_n(base: str, mark: str) -> None:
    """Ruling 12 for Spanish: ñ keeps its tilde (a tile of its own); every other accent, and a
    tilde on any other letter, fold away."""
    kept = mark == "\u0303" and base == "n"
    expected = "ñ" if kept else base
    assert get_language("es").normalise(base + mark) == expected
    assert get_language("es").normalise((base + mark).upper()) == expected


@pytest.mark.parametrize("code", [c for c in LANGUAGE_CODES if c != "de"])
def test_sharp_s_is_two_letters_outside_german(code: str) -> None:
    """Ruling 12: only German keeps ß as a tile of its own; every other language folds it
    (and capital ẞ) to "ss", as Unicode case folding does."""
    assert get_language(code).normalise("ß") == "ss"
    assert get_language(code).normalise("ẞ") == "ss"
    assert get_language("de").normalise("ẞ") == "ß"


def test_keyboard_rows_and_alphabets_are_built_letter_by_letter() -> None:
    """The tables are written as text: a row is its space-separated tiles, an alphabet its
    letters in order."""
    assert _rows("q w e", "a sh") == (("q", "w", "e"), ("a", "sh"))
    assert _letters("абв") == ("а", "б", "в")
