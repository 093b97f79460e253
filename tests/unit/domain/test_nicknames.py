"""Unit tests: nickname generation and validation (ruling 11)."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shared.domain.errors import InvalidNicknameError, LookalikeNicknameError
from shared.domain.glyphs import display_width, is_blank, is_mixed_script
from shared.domain.languages import get_language
from shared.domain.nicknames import (
    NICKNAME_MAX_CHARS,
    NICKNAME_MAX_MARKS,
    NICKNAME_MAX_WIDTH,
    NICKNAME_MIN_CHARS,
    check_not_lookalike,
    generate_nickname,
    validate_nickname,
)
from shared.domain.offensive import nickname_is_offensive

GAME_LANGUAGES = ("en", "id", "de", "es", "fr", "it", "nl", "uz", "pl", "pt", "kk", "ru", "uk")
ENGLISH_SHAPE = re.compile(r"[A-Z][a-z]+[A-Z][a-z]+[1-9][0-9]")
NEUTRAL_SHAPE = re.compile(r"[A-Z][a-z]{3}-[A-Z][a-z]{3} [1-9][0-9]")


# --- generation -----------------------------------------------------------------------------
@settings(max_examples=300)
@given(seed=st.integers(0, 2**64), language=st.sampled_from((*GAME_LANGUAGES, "xx", "")))
def test_generated_nickname_is_always_valid_and_already_clean(seed: int, language: str) -> None:
    """Ruling 11: the generated nickname passes validation unchanged, in every language."""
    rng = random.Random(seed)
    for _ in range(20):
        nickname = generate_nickname(rng, language)
        assert validate_nickname(nickname) == nickname


def test_english_nickname_is_adjective_noun_number() -> None:
    """English nicknames look like "BraveOtter42"."""
    rng = random.Random(7)
    for _ in range(200):
        assert ENGLISH_SHAPE.fullmatch(generate_nickname(rng, "en"))
    assert ENGLISH_SHAPE.fullmatch(generate_nickname(random.Random(7)))  # "en" is the default


@pytest.mark.parametrize("language", [code for code in GAME_LANGUAGES if code != "en"] + ["zz"])
def test_other_languages_get_a_language_free_nickname(language: str) -> None:
    """A neutral, language-free fallback (syllables, no English words)."""
    rng = random.Random(language)
    for _ in range(50):
        assert NEUTRAL_SHAPE.fullmatch(generate_nickname(rng, language))


@pytest.mark.parametrize("language", ["en", "de"])
def test_generation_is_deterministic_given_the_seed(language: str) -> None:
    """Domain rule: randomness only from the injected random.Random."""
    first = [generate_nickname(random.Random(123), language) for _ in range(3)]
    assert first == [generate_nickname(random.Random(123), language)] * 3
    rng_a, rng_b = random.Random(99), random.Random(99)
    assert [generate_nickname(rng_a, language) for _ in range(50)] == [
        generate_nickname(rng_b, language) for _ in range(50)
    ]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_generated_nicknames_vary_enough(language: str) -> None:
    """At least 100k combinations, so 5,000 draws hardly ever repeat."""
    rng = random.Random(2024)
    draws = [generate_nickname(rng, language) for _ in range(5000)]
    # 368,640 English combinations: about 34 repeats expected among 5,000 draws.
    assert len(set(draws)) >= 4900


def test_english_word_lists_give_at_least_100k_combinations() -> None:
    """Decent variety, counted from the distinct adjectives, nouns and numbers seen."""
    rng = random.Random(5)
    parts = [
        re.fullmatch(r"([A-Z][a-z]+)([A-Z][a-z]+)(\d+)", generate_nickname(rng))
        for _ in range(20000)
    ]
    adjectives = {m.group(1) for m in parts if m}
    nouns = {m.group(2) for m in parts if m}
    numbers = {m.group(3) for m in parts if m}
    assert len(adjectives) * len(nouns) * len(numbers) >= 100_000


# --- validation: accepted -------------------------------------------------------------------
@pytest.mark.parametrize(
    "nickname",
    ["Ана_42", "महेश", "محمد.1", "Zoë-Ø", "abc", "x" * 20, "Kavo-Rimu 17", "oʻgʻil", "日本語"],
)
def test_letters_and_digits_of_any_script_are_accepted(nickname: str) -> None:
    """Ruling 11: letters and digits of any script plus space _ - . are allowed."""
    assert validate_nickname(nickname) == nickname


def test_surrounding_whitespace_is_trimmed() -> None:
    """Nicknames are trimmed (a pasted newline at the end is forgiven)."""
    assert validate_nickname("  BraveOtter42\n") == "BraveOtter42"
    assert validate_nickname("\u3000Ана\u00a0") == "Ана"


def test_inner_runs_of_spaces_collapse_to_one() -> None:
    """Inner runs of whitespace become one ASCII space."""
    assert validate_nickname("Brave    Otter") == "Brave Otter"
    assert validate_nickname("Brave\u00a0\u2003 Otter") == "Brave Otter"


def test_decomposed_input_is_accepted_and_normalised_to_nfc() -> None:
    """NFC; "Zoe" + combining diaeresis equals the precomposed "Zoë"."""
    decomposed = "Zoe\u0308-\u00d8"
    assert decomposed != "Zoë-Ø"
    cleaned = validate_nickname(decomposed)
    assert cleaned == "Zoë-Ø"
    assert unicodedata.is_normalized("NFC", cleaned)


def test_length_is_counted_in_code_points_after_nfc() -> None:
    """20 decomposed é (40 code points) are 20 characters after NFC."""
    assert validate_nickname("e\u0301" * 20) == "\u00e9" * 20


def test_combining_marks_on_letters_are_accepted() -> None:
    """Combining marks that follow a letter (stacked marks too) are allowed."""
    assert validate_nickname("a\u0323\u0302bc") == unicodedata.normalize("NFC", "a\u0323\u0302bc")
    assert validate_nickname("क्षत्र") == "क्षत्र"


@pytest.mark.parametrize("nickname", ["abc", "x" * 20])
def test_length_edges_3_and_20_are_accepted(nickname: str) -> None:
    """3–20 characters, both edges included."""
    assert NICKNAME_MIN_CHARS == 3
    assert NICKNAME_MAX_CHARS == 20
    assert validate_nickname(nickname) == nickname


# --- validation: refused --------------------------------------------------------------------
def refusal(raw: str) -> str:
    with pytest.raises(InvalidNicknameError) as caught:
        validate_nickname(raw)
    assert caught.value.code == "invalid_nickname"
    return caught.value.message


@pytest.mark.parametrize("raw", ["", "  ", "\t\n", "\u3000"])
def test_empty_or_blank_nickname_is_refused_as_empty(raw: str) -> None:
    """Nothing left after trimming."""
    assert "empty" in refusal(raw)


@pytest.mark.parametrize("raw", ["ab", " ab ", "a ", "e\u0301e\u0301"])
def test_nickname_under_3_characters_is_too_short(raw: str) -> None:
    """At least 3 characters (after trimming and NFC)."""
    assert "too short" in refusal(raw)


def test_nickname_of_21_characters_is_too_long() -> None:
    """At most 20 characters."""
    assert "too long" in refusal("x" * 21)


@pytest.mark.parametrize(
    ("raw", "position", "codepoint"),
    [
        ("\u200bab c", 1, "U+200B"),  # zero-width space (Cf)
        ("a\u202eb c", 2, "U+202E"),  # right-to-left override (Cf)
        ("ab\u200dcd", 3, "U+200D"),  # zero-width joiner (Cf)
        ("abc\u200f", 4, "U+200F"),  # right-to-left mark (Cf)
        ("\ufeffabc", 1, "U+FEFF"),  # byte order mark (Cf)
    ],
)
def test_invisible_format_characters_are_refused_with_their_position(
    raw: str, position: int, codepoint: str
) -> None:
    """No format (Cf) characters such as zero-width joiners or bidi marks."""
    message = refusal(raw)
    assert f"position {position}" in message
    assert codepoint in message
    assert "format" in message


@pytest.mark.parametrize(
    "raw", ["ab\x00cd", "ab\x07cd", "ab\tcd", "ab\ncd", "ab\x7fcd", "ab\x9bcd"]
)
def test_control_characters_inside_are_refused(raw: str) -> None:
    """No control (Cc) characters, inner tabs and newlines included."""
    message = refusal(raw)
    assert "position 3" in message
    assert "control" in message


@pytest.mark.parametrize("raw", ["ab\ue000cd", "abc\U000f0000", "\U00100001abc"])
def test_private_use_characters_are_refused(raw: str) -> None:
    """No private-use (Co) characters."""
    assert "private-use" in refusal(raw)


def test_surrogates_and_unassigned_code_points_are_refused() -> None:
    """No surrogate (Cs) or unassigned (Cn) code points."""
    assert "surrogate" in refusal("ab\ud800cd")
    assert "unassigned" in refusal("ab\U000e0fffcd")  # never assigned (plane 14 gap)


@pytest.mark.parametrize(
    "raw", ["ab!cd", "ab@cd", "ab/cd", "a😀bc", "abc€", "a+b=c", "<b>x</b>", "ab'cd", "a\u2028bc"]
)
def test_symbols_and_other_punctuation_are_refused(raw: str) -> None:
    """Only letters, digits, space, _ - . are allowed."""
    assert "forbidden character" in refusal(raw)


@pytest.mark.parametrize("raw", ["\u0301abc", "1\u20e3ab", "a \u0301b", "_\u0308ab"])
def test_combining_mark_not_following_a_letter_is_refused(raw: str) -> None:
    """Combining marks are allowed only after a letter."""
    assert "combining mark" in refusal(raw)


def test_refusal_message_never_echoes_the_forbidden_character() -> None:
    """A bidi override in an error message (or a log line) could reorder it."""
    assert "\u202e" not in refusal("a\u202eb c")


# --- validation: properties -----------------------------------------------------------------
@settings(max_examples=500)
@given(st.text())
@example("")
@example("e\u0301" * 21)
@example(" a \u00a0 b ")
@example("\u1100\u1161 \u1161")  # Hangul jamo around a space: must not compose across it
def test_validation_returns_a_fixed_point_or_refuses(raw: str) -> None:
    """On any text, validation returns a clean nickname (valid, NFC, 3–20 code points,
    re-validating to itself) or raises InvalidNicknameError, never anything else."""
    try:
        cleaned = validate_nickname(raw)
    except InvalidNicknameError:
        return
    assert validate_nickname(cleaned) == cleaned
    assert unicodedata.is_normalized("NFC", cleaned)
    assert NICKNAME_MIN_CHARS <= len(cleaned) <= NICKNAME_MAX_CHARS
    assert cleaned == cleaned.strip()
    assert "  " not in cleaned


@given(
    st.text(
        alphabet=st.characters(categories=("L", "N")).filter(lambda c: not is_blank(c))
        | st.sampled_from("_-.")
        | st.sampled_from(" \u00a0\u2003\u3000"),
        max_size=40,
    )
)
def test_letters_digits_and_allowed_punctuation_fail_only_on_length(raw: str) -> None:
    """Rulings 11 and 16: text made only of allowed (visible) characters is refused for
    emptiness or length only, unless it is too wide, mixes scripts within a word or holds a
    word of the offensive blocklists (each with its own message)."""
    # Here every whitespace is a space separator, so split/join is exactly trim + collapse.
    clean = unicodedata.normalize("NFC", " ".join(unicodedata.normalize("NFC", raw).split()))
    length = len(clean)
    words = re.split(r"[ _.-]+", clean)
    if not NICKNAME_MIN_CHARS <= length <= NICKNAME_MAX_CHARS:
        with pytest.raises(InvalidNicknameError, match=r"empty|too short|too long"):
            validate_nickname(raw)
    elif display_width(clean) > NICKNAME_MAX_WIDTH:
        with pytest.raises(InvalidNicknameError, match="too wide"):
            validate_nickname(raw)
    elif any(is_mixed_script(w) for w in words):
        with pytest.raises(InvalidNicknameError, match="mixes scripts"):
            validate_nickname(raw)
    elif nickname_is_offensive(clean):
        with pytest.raises(InvalidNicknameError, match="offensive"):
            validate_nickname(raw)
    else:
        assert len(validate_nickname(raw)) == length


def test_a_forbidden_character_is_named_by_code_point_and_unicode_name() -> None:
    """The refusal names the character by code point and Unicode name (never echoes it)."""
    with pytest.raises(InvalidNicknameError) as caught:
        validate_nickname("ab!cd")
    assert caught.value.message == (
        "forbidden character at position 3: character other than a letter, digit, space, "
        "_ - . (U+0021 EXCLAMATION MARK)"
    )
    with pytest.raises(InvalidNicknameError) as caught:
        validate_nickname("ab\u0378cd")  # unassigned: no name
    assert caught.value.message == (
        "forbidden character at position 3: unassigned code point (U+0378)"
    )


@pytest.mark.parametrize("language", ["en", "de"])
def test_generated_nicknames_end_in_every_two_digit_number(language: str) -> None:
    """The number of a generated nickname is any of 10..99, uniformly drawn."""
    numbers = {
        int(generate_nickname(random.Random(seed), language).rsplit(" ", 1)[-1][-2:])
        for seed in range(3_000)
    }
    assert numbers == set(range(10, 100))


def test_an_empty_nickname_is_refused_as_empty() -> None:
    with pytest.raises(InvalidNicknameError, match=r"^nickname is empty$"):
        validate_nickname(" \u3000 ")


def test_syllable_names_never_spell_a_denylisted_string_across_the_hyphen() -> None:
    from shared.domain.nicknames import _NEUTRAL_DENYLIST

    for seed in range(2_000):
        name = generate_nickname(random.Random(seed), "ru")
        letters = "".join(ch for ch in name.lower() if ch.isalpha())
        assert not any(bad in letters for bad in _NEUTRAL_DENYLIST), name


def test_an_offensive_nickname_is_refused_without_echoing_the_word() -> None:
    with pytest.raises(InvalidNicknameError, match=r"^nickname contains an offensive word$"):
        validate_nickname("Shit Head")


# --- ruling 16: names that cannot impersonate or deface --------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "𝗳𝘂𝗰𝗸 you",  # mathematical sans-serif bold
        "ｆｕｃｋ",  # fullwidth
        "f.u.c.k",
        "f u c k",
        "f_u_c_k",
        "F-U-C-K off",
        "fu.ck",
    ],
)
def test_profanity_in_compatibility_letters_or_spelled_out_is_offensive(raw: str) -> None:
    with pytest.raises(InvalidNicknameError, match="offensive"):
        validate_nickname(raw)


@pytest.mark.parametrize("raw", ["fuсk", "niggεr", "Вob", "pаypal"])  # Cyrillic с, Greek ε...
def test_a_word_mixing_scripts_is_refused(raw: str) -> None:
    with pytest.raises(InvalidNicknameError, match="mixes scripts"):
        validate_nickname(raw)


@pytest.mark.parametrize(
    "raw", ["東京たろう", "山田タロウ", "Oʻzbekiston", "ソニーSony", "김Kim", "Иван Ivan", "Ελένη"]
)
def test_one_writing_system_per_word_is_accepted(raw: str) -> None:
    """Japanese and Korean mixes are one writing system (UTS #39 Highly Restrictive); Uzbek's
    ʻ is a modifier letter; different scripts in different words are fine."""
    assert validate_nickname(raw) == raw


@pytest.mark.parametrize(
    "raw",
    [
        "\u3164\u3164\u3164",
        "\u3164a\u3164",
        "ab\u3164c",
        "a\u115fbc",
        "ab\u1160c",
        "\uffa0abc",
        "abc\ufe0f",
    ],
    ids=["fillers", "padded-letter", "inner-filler", "choseong", "jungseong", "halfwidth", "vs16"],
)
def test_blank_letters_and_marks_are_refused_outright(raw: str) -> None:
    with pytest.raises(InvalidNicknameError, match="blank letter"):
        validate_nickname(raw)


def test_zalgo_text_is_refused_and_three_marks_on_a_letter_pass() -> None:
    zalgo = "Z" + "".join(chr(0x0300 + i) for i in range(19)) + "algo"
    with pytest.raises(InvalidNicknameError, match="too many combining marks"):
        validate_nickname(zalgo)
    assert NICKNAME_MAX_MARKS == 3
    three = "a\u0301\u0302\u0303bc"
    assert validate_nickname(three) == unicodedata.normalize("NFC", three)
    with pytest.raises(InvalidNicknameError, match="too many combining marks"):
        validate_nickname("q\u0301\u0302\u0303\u0304bc")  # no precomposed q


@pytest.mark.parametrize("raw", ["ज़िंदगी", "Nguyễn Văn Toàn", "Trần Thị Hằng", "स्त्री", "क्षत्रिय"])
def test_hindi_and_vietnamese_names_keep_their_marks(raw: str) -> None:
    assert validate_nickname(raw) == unicodedata.normalize("NFC", raw)


@pytest.mark.parametrize("language", GAME_LANGUAGES)
def test_every_game_alphabet_makes_valid_nicknames(language: str) -> None:
    """Each letter of the 13 game alphabets, upper and lower case, twice and a digit, is a valid
    name: the mark, width and script rules refuse no letter a language plays with."""
    alphabet = get_language(language).alphabet
    for letter in alphabet:
        for form in {letter, letter.upper()}:
            name = f"{form}{form} 7"
            assert validate_nickname(name) == unicodedata.normalize("NFC", name)


@pytest.mark.parametrize(
    ("raw", "width"),
    [("\ufdfa" * 20, 360), ("\ufdfa", 18), ("ab\ufdfa\ufdfa", 38), ("山田太郎" * 3, 24)],
)
def test_names_wider_than_20_columns_are_refused(raw: str, width: int) -> None:
    assert display_width(raw) == width
    with pytest.raises(InvalidNicknameError, match=r"too wide|too short"):
        validate_nickname(raw)


@pytest.mark.parametrize(
    ("raw", "width"),
    [("BraveOtter42", 12), ("x" * 20, 20), ("山田太郎" * 2 + "東京", 20), ("ﬃ", 3), ("𒀀𒀁𒀂", 9)],
)
def test_display_width_counts_columns(raw: str, width: int) -> None:
    assert display_width(raw) == width
    assert NICKNAME_MAX_WIDTH == 20


@pytest.mark.parametrize("raw", ["Penistone", "Matsushita", "Scunthorpe", "Penelope", "Negroni"])
def test_place_and_family_names_with_a_root_inside_are_accepted(raw: str) -> None:
    assert validate_nickname(raw) == raw


@pytest.mark.parametrize(
    ("mine", "theirs"),
    [
        ("ТОМАЅ СОХ", "Tomas Cox"),  # all Cyrillic capitals
        ("T0mas C0x", "Tomas Cox"),  # zeros
        ("TOMAS COX", "Tomas Cox"),  # case
        ("Bi11", "Bill"),  # ones for ls
        ("Вob", "Bob"),  # a Cyrillic capital В in a Latin word
        ("Tomas Cox", "Tomas Cox"),
    ],
)
def test_a_name_that_looks_like_a_neighbours_is_refused(mine: str, theirs: str) -> None:
    with pytest.raises(LookalikeNicknameError) as refused:
        check_not_lookalike(mine, ["Kavo-Rimu 17", theirs])
    assert refused.value.code == "nickname_lookalike"


@pytest.mark.parametrize(("mine", "theirs"), [("Tomas Fox", "Tomas Cox"), ("Bob", "Rob")])
def test_a_name_that_only_resembles_a_neighbours_is_accepted(mine: str, theirs: str) -> None:
    check_not_lookalike(mine, [theirs])
    check_not_lookalike(mine, [])
