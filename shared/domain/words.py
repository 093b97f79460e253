"""Domain layer: checking a typed guess against the game language (ruling 5, ruling 12).

A guess is normalised for its language (NFC, case folding, the language's folding), split into
tiles, and accepted only with the secret's length, the language's letters and a place in the
allowed list. Each refusal leaves the duel untouched (ruling 5: the turn and the clock go on).

The allowed list reaches the domain as data (``AllowedWords``), as the secrets do
(``Dealer.words``): the domain never asks the services whether a word is allowed.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass

from shared.domain.errors import InvalidLettersError, NotInWordListError, WrongLengthError
from shared.domain.languages import Language


def check_guess(
    language: Language, allowed: Container[str], raw: str, length: int
) -> tuple[str, tuple[str, ...]]:
    """Normalise ``raw`` and check it as a guess for a secret of ``length`` tiles.

    Returns:
        ``(word, tiles)``: the play form and its tiles.

    Raises:
        InvalidLettersError: letters outside the language's alphabet (checked first, so the
            player learns the real problem rather than "wrong length").
        WrongLengthError: not ``length`` tiles.
        NotInWordListError: not in ``allowed``.
    """
    word = language.normalise(raw)
    if not word or not language.is_spellable(word):
        raise InvalidLettersError(f"use only the letters of the {language.name} alphabet")
    tiles = language.tiles(word)
    if len(tiles) != length:
        raise WrongLengthError(f"the word has {length} letters")
    if word not in allowed:
        raise NotInWordListError("not in the word list")
    return word, tiles


@dataclass(frozen=True, slots=True)
class AllowedWords:
    """What a typed guess is judged against: the game ``language`` (normalising, alphabet,
    tiles) and every play form it accepts as a guess, by length in tiles (answers included;
    the services read it from their lexicon, once per guess)."""

    language: Language
    by_length: Mapping[int, Container[str]]
    """Length in tiles -> the accepted play forms (a length missing: none)."""

    def check(self, raw: str, length: int) -> tuple[str, tuple[str, ...]]:
        """``check_guess`` of ``raw`` for a secret of ``length`` tiles, against the words of
        that length."""
        return check_guess(self.language, self.by_length.get(length, frozenset()), raw, length)
