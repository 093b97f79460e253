"""The committed word lists: tiles, lengths, order, NFC, answers in allowed, floors, exclusions,
the curated offensive blocklists, German ß, everyday guesses and the review samples."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from shared.domain.languages import LANGUAGE_CODES, get_language
from shared.domain.offensive import blocklist

ROOT = Path(__file__).resolve().parents[3] / "wordlists"
LENGTHS = (4, 5, 6)
ANSWER_FLOOR = 300


def _lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n"), f"{path} must end with a newline"
    return text.splitlines()


def _answer_lines(code: str, n: int) -> list[tuple[str, str | None]]:
    out = []
    for line in _lines(ROOT / code / f"answers-{n}.txt"):
        play, tab, shown = line.partition("\t")
        out.append((play, shown if tab else None))
    return out


@pytest.mark.parametrize("code", LANGUAGE_CODES)
def test_every_word_is_spelled_with_the_language_tiles_at_the_file_length(code: str) -> None:
    lang = get_language(code)
    for kind in ("answers", "allowed"):
        for n in LENGTHS:
            path = ROOT / code / f"{kind}-{n}.txt"
            words = [line.partition("\t")[0] for line in _lines(path)]
            bad = [w for w in words if not lang.is_spellable(w) or len(lang.tiles(w)) != n]
            assert not bad, f"{path.name}: {bad[:10]}"
            # Every word is already in play form: normalising it again changes nothing. (For
            # the big allowed lists, spellable NFC lower-case tiles imply this except for the
            # Uzbek apostrophes, so the full check runs on answers and on Uzbek.)
            checked = words if kind == "answers" or code == "uz" else words[::50]
            unnormal = [w for w in checked if lang.normalise(w) != w]
            assert not unnormal, f"{path.name}: {unnormal[:10]}"


@pytest.mark.parametrize("code", LANGUAGE_CODES)
def test_files_are_nfc_sorted_and_unique(code: str) -> None:
    for kind in ("answers", "allowed"):
        for n in LENGTHS:
            path = ROOT / code / f"{kind}-{n}.txt"
            lines = _lines(path)
            assert all(unicodedata.is_normalized("NFC", line) for line in lines), path.name
            words = [line.partition("\t")[0] for line in lines]
            assert words == sorted(set(words)), f"{path.name} is not sorted and unique"


@pytest.mark.parametrize("code", LANGUAGE_CODES)
def test_every_answer_is_allowed_and_floors_are_met(code: str) -> None:
    for n in LENGTHS:
        answers = [play for play, _ in _answer_lines(code, n)]
        allowed = set(_lines(ROOT / code / f"allowed-{n}.txt"))
        assert len(answers) >= ANSWER_FLOOR, f"{code} answers-{n}: only {len(answers)}"
        missing = set(answers) - allowed
        assert not missing, f"{code} answers-{n} not allowed: {sorted(missing)[:10]}"
        assert len(allowed) >= 2 * len(answers), f"{code} allowed-{n} is too small"


@pytest.mark.parametrize("code", LANGUAGE_CODES)
def test_display_forms_normalise_to_their_play_form(code: str) -> None:
    lang = get_language(code)
    for n in LENGTHS:
        for play, shown in _answer_lines(code, n):
            if shown is not None:
                assert shown != play
                assert lang.normalise(shown) == play, (play, shown)


@pytest.mark.parametrize("code", LANGUAGE_CODES)
def test_no_answer_is_a_stop_word_offensive_word_or_blocklisted(code: str) -> None:
    lang = get_language(code)
    excluded = {
        lang.normalise(line)
        for path in (ROOT / code / "excluded.txt", ROOT / code / "blocklist.txt")
        if path.exists()
        for raw in path.read_text(encoding="utf-8").splitlines()
        if (line := raw.split("#", 1)[0].strip())
    }
    for n in LENGTHS:
        hits = {play for play, _ in _answer_lines(code, n)} & excluded
        assert not hits, f"{code} answers-{n}: {sorted(hits)}"


def test_excluded_lists_hold_known_stop_words() -> None:
    """The derived exclusion files are real: a few well-known stop words are in them."""
    samples = {"en": "about", "de": "nicht", "es": "para", "fr": "avec", "ru": "когда"}
    for code, word in samples.items():
        excluded = set(_lines(ROOT / code / "excluded.txt"))
        assert word in excluded, (code, word)


def test_review_file_has_the_seeded_sample_of_forty_secrets_per_length() -> None:
    """REVIEW.md's samples are the builder's seeded draw from the committed answers."""
    from wordlists.build import SAMPLE_PER_LENGTH, review_sample

    text = (ROOT / "REVIEW.md").read_text(encoding="utf-8")
    sections = text.split("\n## ")[1:]
    assert [s.split(" ", 1)[0] for s in sections] == list(LANGUAGE_CODES)
    for code, section in zip(LANGUAGE_CODES, sections, strict=True):
        for n in LENGTHS:
            sample = review_sample(code, n)
            assert len(sample) == SAMPLE_PER_LENGTH == 40
            assert f"\n- {n}: " + ", ".join(sample) + "\n" in section, (code, n)
        assert "Reference:" in section


@pytest.mark.parametrize("code", LANGUAGE_CODES)
def test_no_answer_is_on_the_curated_offensive_blocklist(code: str) -> None:
    """Ruling 16: the domain blocklist (whole words, prefixes, infixes) keeps secrets clean."""
    offensive = blocklist(code)
    for n in LENGTHS:
        hits = [
            shown or play
            for play, shown in _answer_lines(code, n)
            if offensive.blocks_answer(play) or offensive.blocks_answer(shown or play)
        ]
        assert not hits, f"{code} answers-{n}: {hits[:10]}"


REPORTED_OFFENSIVE = {
    "nl": ["penis", "dildo", "bitch", "pissen", "piemel"],
    "ru": ["шлюха", "сука", "сучка"],
    "de": ["dildo", "schwul"],
    "es": ["polla", "ojete"],
    "pt": ["puto", "tesão"],
    "fr": ["pine"],
    "uk": ["дупа"],
    "kk": ["зорлау"],
}
REPORTED_NAMES_AND_NON_WORDS = {
    "en": ["peter", "jimmy", "tesla", "nancy", "yahoo"],
    "de": ["bernd", "heiko", "malmö", "tokio", "kenia"],
    "nl": ["henry", "horst"],
    "it": ["viii", "xiii", "xxvii", "facci", "dirti"],
    "pt": ["xvii"],
    "pl": ["wobec", "zatem", "litra"],
    "uk": ["чайок", "штаба"],
    "kk": ["тауы", "ауып"],
}


@pytest.mark.parametrize(
    ("code", "word"),
    [
        (c, w)
        for table in (REPORTED_OFFENSIVE, REPORTED_NAMES_AND_NON_WORDS)
        for c, ws in table.items()
        for w in ws
    ],
)
def test_reported_bad_secret_is_no_answer(code: str, word: str) -> None:
    lang = get_language(code)
    play = lang.normalise(word)
    answers = {p for n in LENGTHS for p, _ in _answer_lines(code, n)}
    assert play not in answers


@pytest.mark.parametrize("code", [c for c in LANGUAGE_CODES if get_language(c).alphabet[0] == "a"])
def test_no_answer_is_a_roman_numeral(code: str) -> None:
    numeral = re.compile(r"m{0,4}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})")
    for n in LENGTHS:
        hits = [play for play, _ in _answer_lines(code, n) if numeral.fullmatch(play)]
        assert not hits, f"{code} answers-{n}: {hits}"


def test_german_answers_keep_sharp_s() -> None:
    """Ruling 12: ß is a tile; the frequency source folds it, the lists must not."""
    answers = {p for n in LENGTHS for p, _ in _answer_lines("de", n)}
    with_sharp_s = {p for p in answers if "ß" in p}
    assert len(with_sharp_s) >= 20, sorted(with_sharp_s)
    assert {"straße", "heiß", "spaß", "größe"} <= answers
    assert not {"strasse", "heiss", "spass", "groesse"} & answers


EVERYDAY_GUESSES = {
    "id": ["senin", "kamis", "april", "dulu", "tapi", "sate", "ponsel", "admin", "anime"],
    "fr": ["mango", "hippo", "rhino", "trend"],
    "en": ["cyber", "donut", "snuck", "flyer"],
    "es": ["sushi", "kayak", "búnker"],
    "de": ["jungs", "audio", "rüber", "straße", "groß"],
    # The apostrophe is no tile: these are typed without it.
    "uk": ["пам'ять", "м'ясо", "сім'я"],
}


@pytest.mark.parametrize(
    ("code", "word"), [(c, w) for c, ws in EVERYDAY_GUESSES.items() for w in ws]
)
def test_reported_everyday_word_is_accepted_as_a_guess(code: str, word: str) -> None:
    lang = get_language(code)
    play = lang.normalise(word)
    n = len(lang.tiles(play))
    assert play in set(_lines(ROOT / code / f"allowed-{n}.txt"))
