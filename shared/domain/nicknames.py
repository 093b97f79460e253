"""Domain layer: anonymous nickname generation and nickname validation (ruling 11).

Players are anonymous (ruling 11): the first session gets a generated nickname, and a player may
change it later. ``generate_nickname`` makes one from an injected ``random.Random`` (English
adjective + noun + number for ``"en"``, a language-free syllable name for every other language).
``validate_nickname`` cleans a player's choice (NFC, trimmed, inner spaces collapsed) and refuses
anything outside the rules: 3-20 code points of letters and digits of any script, combining marks
that follow a letter (at most 3 on one), space, ``_``, ``-`` and ``.``; at most 20 display
columns; no word mixing scripts; no word of the offensive blocklists of the 13 game and 5 UI
languages (ruling 16, ``shared.domain.offensive``); no control, format, private-use, surrogate,
unassigned or blank (Hangul filler) characters. ``check_not_lookalike`` refuses a name that
looks like another player's (ruling 16). Unicode data is the running Python's
``unicodedata`` (Unicode 14.0 on 3.11, newer on later Pythons), so a code point unassigned on one
runtime may be a letter on the next; nicknames stored once are never re-validated against an
older table (nor against a later blocklist).
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Iterable

from shared.domain.errors import InvalidNicknameError, LookalikeNicknameError
from shared.domain.glyphs import display_width, is_blank, is_mixed_script, lookalike_keys
from shared.domain.offensive import nickname_is_offensive

__all__ = [
    "NICKNAME_MAX_CHARS",
    "NICKNAME_MAX_MARKS",
    "NICKNAME_MAX_WIDTH",
    "NICKNAME_MIN_CHARS",
    "check_not_lookalike",
    "generate_nickname",
    "validate_nickname",
]

NICKNAME_MIN_CHARS = 3
"""Shortest nickname, in code points after NFC."""

NICKNAME_MAX_CHARS = 20
"""Longest nickname, in code points after NFC."""

NICKNAME_MAX_MARKS = 3
"""Most combining marks on one letter (after NFC): Hindi needs 3 (ज़िं: nukta, vowel sign,
anusvara), Vietnamese none (NFC composes it); Zalgo text stacks dozens."""

NICKNAME_MAX_WIDTH = 20
"""Widest nickname, in display columns (``shared.domain.glyphs.display_width``): 20 Latin
letters or 10 ideographs."""

_ALLOWED_PUNCTUATION = frozenset(" _-.")

# Kid-safe, letters only; no colours (colour + animal can read as a slur) and no primates.
# 64 x 64 x 90 numbers = 368,640 English nicknames, the longest 17 characters.
_EN_ADJECTIVES: tuple[str, ...] = (
    "Agile", "Amber", "Azure", "Bold", "Brave", "Breezy", "Bright", "Calm",
    "Cheery", "Clever", "Cosmic", "Crisp", "Curious", "Dapper", "Daring", "Dizzy",
    "Eager", "Epic", "Fancy", "Fearless", "Frosty", "Gentle", "Giddy", "Golden",
    "Happy", "Hardy", "Honest", "Humble", "Jazzy", "Jolly", "Keen", "Kind",
    "Lively", "Loyal", "Lucky", "Lunar", "Mellow", "Merry", "Mighty", "Misty",
    "Nimble", "Noble", "Peppy", "Plucky", "Polite", "Proud", "Quick", "Quiet",
    "Rapid", "Royal", "Rustic", "Sharp", "Shiny", "Silver", "Snappy", "Solar",
    "Spry", "Steady", "Stellar", "Sturdy", "Sunny", "Swift", "Witty", "Zesty",
)  # fmt: skip
_EN_NOUNS: tuple[str, ...] = (
    "Acorn", "Badger", "Beaver", "Bison", "Camel", "Comet", "Crane", "Dingo",
    "Dolphin", "Eagle", "Falcon", "Ferret", "Finch", "Fox", "Gecko", "Gopher",
    "Hawk", "Hedgehog", "Heron", "Ibis", "Jaguar", "Kestrel", "Kiwi", "Koala",
    "Lemur", "Llama", "Lynx", "Magpie", "Maple", "Marmot", "Meerkat", "Moose",
    "Narwhal", "Newt", "Ocelot", "Orca", "Osprey", "Otter", "Owl", "Panda",
    "Parrot", "Pebble", "Pelican", "Penguin", "Puffin", "Quokka", "Rabbit", "Raven",
    "Robin", "Rocket", "Salmon", "Seal", "Sparrow", "Squid", "Stork", "Swan",
    "Tapir", "Tiger", "Toucan", "Turtle", "Walrus", "Wombat", "Yak", "Zebra",
)  # fmt: skip

# Language-free names such as "Kavo-Rimu 17": two words of two consonant-vowel syllables.
# 70 syllables -> 70**4 x 90 numbers, about 2.16 billion names, each 12 characters.
_NEUTRAL_CONSONANTS = "bdfgklmnprstvz"
_NEUTRAL_VOWELS = "aeiou"

# Best effort: crude or offensive strings (in the 13 game languages and in English) that CV
# syllables can spell; a name containing one, across the hyphen too, is drawn again.
_NEUTRAL_DENYLIST: tuple[str, ...] = (
    "anal", "anus", "babi", "bite", "caca", "culo", "dago", "dik", "dupa", "fag",
    "fak", "figa", "fuk", "isis", "kafi", "kaka", "kake", "kaki", "kako", "kike",
    "kok", "kupa", "kut", "lul", "meme", "mudi", "nazi", "nega", "nego", "nige",
    "nigi", "niga", "nike", "paki", "pedo", "pede", "peni", "pene", "pido", "pipa",
    "pipi", "pisi", "popo", "pula", "pupa", "puta", "pute", "puti", "puto", "rape",
    "rola", "salope", "sek", "siki", "suka", "suki", "teta", "tete", "tolo", "vagi",
    "zizi",
)  # fmt: skip

_FORBIDDEN_KINDS = {
    "Cc": "control character",
    "Cf": "invisible format character",
    "Co": "private-use character",
    "Cs": "surrogate code point",
    "Cn": "unassigned code point",
}


def _english_nickname(rng: random.Random) -> str:
    return f"{rng.choice(_EN_ADJECTIVES)}{rng.choice(_EN_NOUNS)}{rng.randrange(10, 100)}"


def _neutral_word(rng: random.Random) -> str:
    syllables = (rng.choice(_NEUTRAL_CONSONANTS) + rng.choice(_NEUTRAL_VOWELS) for _ in range(2))
    return "".join(syllables).capitalize()


def _neutral_nickname(rng: random.Random) -> str:
    while True:  # each draw is rejected with a small probability, so this ends quickly
        first, second = _neutral_word(rng), _neutral_word(rng)
        letters = (first + second).lower()
        if any(bad in letters for bad in _NEUTRAL_DENYLIST):
            continue
        name = f"{first}-{second} {rng.randrange(10, 100)}"
        if not nickname_is_offensive(name):
            return name


def generate_nickname(rng: random.Random, language: str = "en") -> str:
    """A fresh anonymous nickname drawn from ``rng`` (ruling 11).

    ``language`` is a game language code. ``"en"`` gives adjective + noun + two-digit number,
    e.g. ``"BraveOtter42"`` (368,640 combinations); any other code, known or not, gives a
    language-free syllable name such as ``"Kavo-Rimu 17"`` (about 2 billion combinations),
    so no player gets English words forced on them. The result always passes
    ``validate_nickname`` unchanged. Deterministic given the state of ``rng``; raises nothing.
    Uniqueness is not promised: nicknames are display names, players are told apart by id.
    """
    if language == "en":
        return _english_nickname(rng)
    return _neutral_nickname(rng)


def _collapse_spaces(text: str) -> str:
    """``text`` with every run of space separators (category Zs) replaced by one ASCII space."""
    out: list[str] = []
    for char in text:
        if unicodedata.category(char) == "Zs":
            if not out or out[-1] != " ":
                out.append(" ")
        else:
            out.append(char)
    return "".join(out)


def _forbidden_message(char: str, position: int, category: str) -> str:
    name = unicodedata.name(char, "")
    label = f"U+{ord(char):04X}" + (f" {name}" if name else "")
    if category in _FORBIDDEN_KINDS:
        kind = _FORBIDDEN_KINDS[category]
    elif is_blank(char):
        kind = "blank letter (it shows as nothing)"
    elif category.startswith("M"):
        kind = "combining mark that does not follow a letter"
    else:
        kind = "character other than a letter, digit, space, _ - ."
    # The character itself is never echoed: it may be invisible or reorder the message.
    return f"forbidden character at position {position}: {kind} ({label})"


def validate_nickname(raw: str) -> str:
    """The cleaned form of the nickname ``raw``, or ``InvalidNicknameError`` (ruling 11).

    Cleaning: Unicode NFC; whitespace trimmed from both ends; each inner run of space separators
    (category Zs, e.g. U+00A0, U+3000) collapsed to one ASCII space. The cleaned nickname must be
    ``NICKNAME_MIN_CHARS``..``NICKNAME_MAX_CHARS`` (3..20) code points of: letters (L*) and
    digits/numbers (N*) of any script, combining marks (M*) directly after a letter or after
    another such mark (at most ``NICKNAME_MAX_MARKS``, 3, on one letter), space, ``_``, ``-``
    and ``.``. Anything else is refused, notably control (Cc, including inner tabs and
    newlines), format (Cf: zero-width and bidi marks), private-use (Co), surrogate (Cs) and
    unassigned (Cn) code points, and blank letters and marks (Default_Ignorable: the Hangul
    fillers U+3164, U+115F, U+1160, U+FFA0, variation selectors), refused outright wherever
    they stand. It must be at most ``NICKNAME_MAX_WIDTH`` (20) display columns
    (``shared.domain.glyphs.display_width``: ideographs 2, ``ﷺ`` 18); no word (between
    separators) may mix scripts (``shared.domain.glyphs.is_mixed_script``); and it must hold no
    word of the offensive blocklists of any game or UI language (ruling 16,
    ``shared.domain.offensive``, matched after NFKC case folding and by skeleton).

    Raises ``InvalidNicknameError`` whose message says which check failed, in this order: empty
    (nothing left after trimming), a forbidden character or too many marks on a letter (1-based
    position in the cleaned text; the code point), too short, too long, too wide, mixed
    scripts, an offensive word (not echoed). The result validates to itself.
    """
    text = unicodedata.normalize("NFC", raw).strip()
    if not text:
        raise InvalidNicknameError("nickname is empty")
    # Collapsing replaces non-composing separators only, but normalise again to keep the
    # result provably NFC (and so a fixed point of this function).
    text = unicodedata.normalize("NFC", _collapse_spaces(text))
    after_letter = False
    marks = 0
    for position, char in enumerate(text, start=1):
        category = unicodedata.category(char)
        if is_blank(char):
            raise InvalidNicknameError(_forbidden_message(char, position, category))
        if category[0] == "L":
            after_letter, marks = True, 0
        elif category[0] == "M" and after_letter:
            # a mark on a letter (or on a letter's earlier marks) keeps the chain
            marks += 1
            if marks > NICKNAME_MAX_MARKS:
                raise InvalidNicknameError(
                    f"too many combining marks on one letter at position {position}: "
                    f"at most {NICKNAME_MAX_MARKS}"
                )
        elif category[0] == "N" or char in _ALLOWED_PUNCTUATION:
            after_letter = False
        else:
            raise InvalidNicknameError(_forbidden_message(char, position, category))
    if len(text) < NICKNAME_MIN_CHARS:
        raise InvalidNicknameError(
            f"nickname is too short: {len(text)} characters, at least {NICKNAME_MIN_CHARS}"
        )
    if len(text) > NICKNAME_MAX_CHARS:
        raise InvalidNicknameError(
            f"nickname is too long: {len(text)} characters, at most {NICKNAME_MAX_CHARS}"
        )
    width = display_width(text)
    if width > NICKNAME_MAX_WIDTH:
        raise InvalidNicknameError(
            f"nickname is too wide: {width} columns, at most {NICKNAME_MAX_WIDTH}"
        )
    if any(is_mixed_script(word) for word in _words(text)):
        raise InvalidNicknameError("nickname mixes scripts within a word")
    if nickname_is_offensive(text):
        # The word is not echoed: the message may be shown or logged.
        raise InvalidNicknameError("nickname contains an offensive word")
    return text


def _words(text: str) -> list[str]:
    for separator in _ALLOWED_PUNCTUATION:
        text = text.replace(separator, " ")
    return text.split()


def check_not_lookalike(nickname: str, others: Iterable[str]) -> None:
    """Raise ``LookalikeNicknameError`` when ``nickname`` looks like one of ``others`` (ruling
    16): they share a ``shared.domain.glyphs.lookalike_keys`` key (the UTS #39 skeleton, case
    folded: ``Вob`` with a Cyrillic В, ``B0b`` and ``BOB`` all look like ``Bob``). ``others``
    are the nicknames of the other players in the same lobby or tournament; an identical name
    is a look-alike too."""
    keys = lookalike_keys(nickname)
    if any(keys & lookalike_keys(other) for other in others):
        raise LookalikeNicknameError()
