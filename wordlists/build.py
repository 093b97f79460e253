"""Builder (offline tool, never run at runtime or in CI): regenerate ``wordlists/<lang>/``.

    python -m wordlists.build [lang ...] [--data ../shared/wordlists-data]
                              [--cache .wordlists-cache]

Needs the ``wordlists`` extra from pyproject.toml (install it into a separate venv), ``apt-get``
and ``dpkg-deb`` for the Debian hunspell packages and ``npm`` for the offensive-word lists. Every
source is pinned below; see wordlists/SOURCES.md for licences and the curation steps.

Pipeline per language:
  allowed  = every hunspell full form (stems expanded with their affix rules), normalised to the
             play form, spellable, 4-6 tiles (+ extra dictionaries for kk/uz, + answers).
  answers  = frequent words (wordfreq / Unilex / zirhuzmorph counts) that are dictionary stems,
             their own lemma (simplemma / pymorphy3 / lexc / zirhuzmorph POS), not a stop word,
             offensive word, name, abbreviation or foreign word, and not in the hand blocklist.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tarfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import ClassVar

from shared.domain.languages import LANGUAGE_CODES, Language, get_language
from shared.domain.offensive import blocklist as offensive_blocklist

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LENGTHS = (4, 5, 6)

# --- pinned sources ----------------------------------------------------------------------
DEBIAN_PACKAGES: dict[str, list[tuple[str, str, str]]] = {
    # lang -> [(package, version, dictionary file stem)]
    "en": [("hunspell-en-us", "1:2020.12.07-2", "en_US")],
    "id": [("hunspell-id", "1:7.5.0-1", "id_ID")],
    "de": [("hunspell-de-de", "20161207-11", "de_DE")],
    "es": [("hunspell-es", "1:7.5.0-1", "es_ES")],
    "fr": [("hunspell-fr-classical", "1:7.0-1", "fr")],
    "it": [("hunspell-it", "1:7.5.0-1", "it_IT")],
    "nl": [("hunspell-nl", "2:2.20.19-2", "nl")],
    "pl": [("hunspell-pl", "1:7.5.0-1", "pl_PL")],
    "pt": [("hunspell-pt-br", "1:7.5.0-1", "pt_BR"), ("hunspell-pt-pt", "1:7.5.0-1", "pt_PT")],
    "ru": [("hunspell-ru", "1:7.5.0-1", "ru_RU")],
    "uk": [("hunspell-uk", "1:7.5.0-1", "uk_UA")],
    "kk": [("hunspell-kk", "1.1-3", "kk_KZ")],
    "uz": [("hunspell-uz", "0.6-6", "uz_UZ")],
}
NAUGHTY_WORDS = "naughty-words@1.2.0"
FULL_FORM_LANGS = ("it",)
WORDFREQ_LANGS = ("en", "id", "de", "es", "fr", "it", "nl", "pl", "pt", "ru", "uk")

# Answer selection: take words down to ZIPF_MIN, then keep going (down to ZIPF_FLOOR) until
# each length has at least MIN_ANSWERS; never more than MAX_ANSWERS (most frequent first).
ZIPF_MIN = 3.0
ZIPF_FLOOR = 2.0
MIN_ANSWERS = {4: 400, 5: 900, 6: 900}
MAX_ANSWERS = {4: 800, 5: 1300, 6: 1000}
# A lower-case word that the dictionary also has capitalised (a name: "roman"/"Roman") must be
# at least this frequent to be an answer.
ZIPF_HOMOGRAPH = 3.5
# Guesses: every word of the frequency list at least this frequent is accepted (loans, day and
# month names, common inflected forms), whether or not the dictionary has it.
ZIPF_GUESS = 2.5
# kk / uz guesses: Unilex forms seen at least this often (lower case).
UNILEX_GUESS_COUNT = 5
ROMAN_NUMERAL = re.compile(r"m{0,4}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})")
# Italian verb forms with attached pronouns (dirti, farla, darci, facci, dammi): never lemmas.
IT_CLITICS = (
    "gliela",
    "glielo",
    "glieli",
    "gliele",
    "gliene",
    "gli",
    "mi",
    "ti",
    "ci",
    "vi",
    "si",
    "lo",
    "la",
    "li",
    "le",
    "ne",
)
IT_SHORT_IMPERATIVE = re.compile(r"(da|fa|di|va|sta)(mm|tt|cc|ll|nn|ss|gl)[iaoe]")
APOSTROPHES = frozenset("'‘’ʻʼ`´ʹ′")

# Why a word was not taken as an answer (the closing report counts words removed per reason).
REASONS: dict[str, dict[str, str]] = defaultdict(dict)


def reject(code: str, play: str, reason: str) -> None:
    """Record the first reason ``play`` was refused as an answer of ``code``."""
    REASONS[code].setdefault(play, reason)


# --- small helpers -----------------------------------------------------------------------
def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ensure_debs(cache: Path, lang: str) -> list[Path]:
    """Download and unpack the pinned Debian packages; return the dictionary path stems."""
    root = cache / "x" / "usr" / "share" / "hunspell"
    debs = cache / "deb"
    debs.mkdir(parents=True, exist_ok=True)
    out = []
    for package, version, stem in DEBIAN_PACKAGES[lang]:
        if not (root / f"{stem}.dic").exists():
            subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=debs, check=True)
            for deb in debs.glob(f"{package}_*.deb"):
                subprocess.run(["dpkg-deb", "-x", str(deb), str(cache / "x")], check=True)
        out.append(root / stem)
    return out


def naughty_words(cache: Path, lang: str) -> set[str]:
    tgz = cache / "naughty-words-1.2.0.tgz"
    if not tgz.exists():
        subprocess.run(["npm", "pack", NAUGHTY_WORDS], cwd=cache, check=True)
    with tarfile.open(tgz) as tar:
        try:
            member = tar.extractfile(f"package/{lang}.json")
        except KeyError:
            return set()
        assert member is not None
        return set(json.load(member))


def stop_words(lang: str) -> set[str]:
    import stopwordsiso

    return set(stopwordsiso.stopwords(lang)) if stopwordsiso.has_lang(lang) else set()


def read_lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text("utf-8").splitlines())
    return [line for line in lines if line]


def length_of(lang: Language, word: str) -> int:
    return len(lang.tiles(word))


def playable(lang: Language, word: str) -> str | None:
    """The play form if the word is a single spellable word of 4-6 tiles, else None."""
    form = lang.normalise(word)
    if lang.is_spellable(form) and length_of(lang, form) in LENGTHS:
        return form
    return None


# --- hunspell expansion ------------------------------------------------------------------
def load_hunspell(path: Path):  # type: ignore[no-untyped-def]
    from spylls.hunspell import Dictionary

    return Dictionary.from_files(str(path))


def expand_hunspell(dictionary, max_chars: int = 9) -> Iterator[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Yield (form, stem) for every stem and affixed form hunspell would accept (no compounds).

    spylls parses the .aff/.dic (including FLAG long/num, where Debian's unmunch fails); the
    affix application here follows hunspell: strip, condition, add; one prefix, up to two
    suffixes; prefix x suffix only when both allow cross products.
    """
    aff = dictionary.aff
    needaffix = aff.NEEDAFFIX
    forbidden = aff.FORBIDDENWORD
    onlyin = aff.ONLYINCOMPOUND
    blocked = {f for f in (forbidden, onlyin) if f}

    def suffixes(word: str, flags: Iterable[str]) -> Iterator[tuple[str, object]]:
        for flag in flags:
            for sfx in aff.SFX.get(flag, ()):
                if sfx.strip and not word.endswith(sfx.strip):
                    continue
                if not sfx.cond_regexp.search(word):
                    continue
                base = word[: len(word) - len(sfx.strip)] if sfx.strip else word
                yield base + sfx.add, sfx

    def prefixes(word: str, flags: Iterable[str]) -> Iterator[tuple[str, object]]:
        for flag in flags:
            for pfx in aff.PFX.get(flag, ()):
                if pfx.strip and not word.startswith(pfx.strip):
                    continue
                if not pfx.cond_regexp.search(word):
                    continue
                yield pfx.add + word[len(pfx.strip) :], pfx

    for entry in dictionary.dic.words:
        stem, flags = entry.stem, entry.flags
        if flags & blocked:
            continue
        if len(stem) > max_chars + 4:
            continue
        if not (needaffix and needaffix in flags):
            yield stem, stem
        for form, sfx in suffixes(stem, flags):
            sflags = sfx.flags  # type: ignore[attr-defined]
            if sflags & blocked:
                continue
            if len(form) <= max_chars and not (needaffix and needaffix in sflags):
                yield form, stem
            for form2, sfx2 in suffixes(form, sflags):
                if len(form2) <= max_chars and not (sfx2.flags & blocked):  # type: ignore[attr-defined]
                    yield form2, stem
            if sfx.crossproduct:  # type: ignore[attr-defined]
                for form3, pfx in prefixes(form, flags):
                    if pfx.crossproduct and len(form3) <= max_chars:  # type: ignore[attr-defined]
                        yield form3, stem
        for form, pfx in prefixes(stem, flags):
            pflags = pfx.flags  # type: ignore[attr-defined]
            if len(form) > max_chars or pflags & blocked:
                continue
            if not (needaffix and needaffix in pflags):
                yield form, stem


def hunspell_forms(
    lang: Language, paths: list[Path], *, keep_capitalised: bool
) -> tuple[dict[str, str], set[str], set[str]]:
    """(play form -> a spelled form, lower-case stems, capitalised stems) over the dictionaries."""
    forms: dict[str, str] = {}
    lower_stems: set[str] = set()
    cap_stems: set[str] = set()
    for path in paths:
        log(f"  expanding {path.name}")
        dictionary = load_hunspell(path)
        for form, stem in expand_hunspell(dictionary):
            if stem[:1].isupper():
                if stem.isupper() and len(stem) > 1:
                    continue  # abbreviations (NATO, GmbH-like)
                cap_stems.add(stem)
                if not keep_capitalised:
                    continue
            elif any(ch.isupper() for ch in stem):
                continue  # mixed case, e.g. iPhone, McDonald
            else:
                lower_stems.add(stem)
            if "." in form or "-" in form or " " in form or any(c.isdigit() for c in form):
                continue
            play = playable(lang, form)
            if play is not None:
                forms.setdefault(play, form)
    return forms, lower_stems, cap_stems


# --- lemma / part-of-speech filters --------------------------------------------------------
class Pymorphy:
    GOOD_POS: ClassVar[set[str]] = {"NOUN", "ADJF", "INFN"}
    BAD_TAGS: ClassVar[set[str]] = {
        "Name",
        "Surn",
        "Patr",
        "Geox",
        "Orgn",
        "Trad",
        "Abbr",
        "Init",
        "Erro",
        "Dist",
        "Infr",
        "Slng",
        "Arch",
        "Litr",
        "Apro",
        "Anum",
        "Pltm",
        "Fixd",
        "LATN",
        "UNKN",
    }

    def __init__(self, lang: str) -> None:
        import pymorphy3

        self.morph = pymorphy3.MorphAnalyzer(lang=lang)

    def lemma_ok(self, word: str) -> bool:
        parses = self.morph.parse(word)
        if not parses or not parses[0].is_known:
            return False
        # The likeliest noun or adjective reading that is a dictionary form (робота "work", not
        # the genitive of робот "robot"; синій "blue", not an imperative of синіти), if it is
        # about as likely as the likeliest reading of all.
        lemma_parses = [
            p
            for p in parses
            if p.normal_form.replace("ё", "е") == word.replace("ё", "е")
            and p.tag.POS in ("NOUN", "ADJF")
            and not set(p.tag.grammemes) & self.BAD_TAGS
            # Possessive adjectives (богів, дедов) hide plural genitives: not lemmas here.
            and not (p.tag.POS == "ADJF" and word.endswith(("ів", "їв", "ин", "ін", "ов", "ев")))
            and p.score >= 0.5 * parses[0].score
        ]
        best = lemma_parses[0] if lemma_parses else parses[0]
        if best.tag.POS == "NOUN" and "nomn" not in best.tag:
            # Inanimate nouns read the same in the accusative (магазин): take the nominative.
            best = next(
                (
                    p
                    for p in parses
                    if p.normal_form == best.normal_form
                    and p.tag.POS == "NOUN"
                    and "nomn" in p.tag
                    and set(p.tag.grammemes) - {"nomn"} == set(best.tag.grammemes) - {"accs"}
                ),
                best,
            )
        # A neuter adjective used as a noun (гарне, друге, зайве) is an adjective's form.
        if best.tag.POS == "NOUN" and any(
            p.tag.POS == "ADJF"
            and {"neut", "nomn"} <= set(p.tag.grammemes)
            and p.normal_form != best.normal_form
            for p in parses
        ):
            return False
        tag = best.tag
        grammemes = set(tag.grammemes)
        # pymorphy3's Ukrainian dictionary tags infinitives VERB+infn and leaves out "sing".
        pos = "INFN" if tag.POS == "VERB" and "infn" in grammemes else tag.POS
        if pos not in self.GOOD_POS or grammemes & self.BAD_TAGS:
            return False
        if best.normal_form.replace("ё", "е") != word.replace("ё", "е"):
            return False
        if pos == "NOUN" and ("nomn" not in grammemes or "plur" in grammemes):
            return False
        if (pos == "ADJF" and not {"nomn", "masc"} <= grammemes) or "plur" in grammemes:
            return False
        # A name reading among the likely parses (e.g. "роман" is fine, "ольга" is not).
        return all(
            not (set(p.tag.grammemes) & {"Name", "Surn", "Geox"}) or p.score < 0.3
            for p in parses[:3]
        )


def simplemma_ok(lang: str, word: str, *, require_known: bool = True) -> bool:
    import simplemma

    if require_known and not simplemma.is_known(word, lang=lang):
        return False
    lemma = simplemma.lemmatize(word, lang=lang)
    return lemma == word or lemma.lower() == word.lower()


# --- per-language answer candidates ----------------------------------------------------------
def wordfreq_candidates(
    code: str, lang: Language, forms: dict[str, str], lower: set[str], cap: set[str], cache: Path
) -> list[tuple[str, str, float]]:
    """(play form, display form, zipf) of frequent dictionary stems that pass the lemma filter."""
    import wordfreq

    morph = Pymorphy(code) if code in ("ru", "uk") else None
    names = english_names(cache)
    checker = load_hunspell(ensure_debs(cache, code)[0]).lookup if code == "de" else None
    out: list[tuple[str, str, float]] = []
    seen: set[str] = set()
    words: Iterable[str] = wordfreq.top_n_list(code, 200_000)
    if code == "de":
        words = with_sharp_s(words, lower, cap)
    for word in words:
        zipf = wordfreq.zipf_frequency(word, code)
        if zipf < ZIPF_FLOOR:
            break
        play = playable(lang, word)
        if play is None or play in seen:
            continue
        if word in names:
            reject(code, play, "proper name")
            continue
        if lang.code != "uz" and ROMAN_NUMERAL.fullmatch(word):
            reject(code, play, "numeral")
            continue
        if APOSTROPHES & set(word):
            reject(code, play, "apostrophe word (guess only)")
            continue
        if code == "it" and it_clitic_form(word, lower):
            reject(code, play, "inflected form")
            continue
        if code == "it" and (play[-1] not in "aeiou" or set(play) & set("jkwxy")):
            # Italian words end in a vowel and do not use j k w x y: the rest are loans
            # (album, click, coach, email) or truncations (alcun, suor).
            reject(code, play, "foreign word")
            continue
        if code == "de":
            # igerman98 lists lower-case compound parts ("apfel" for "Bratapfel"): a lower-case
            # stem counts only when hunspell accepts it as a word of its own.
            noun = word[:1].upper() + word[1:]
            if word in lower and (noun not in cap or checker(word)):
                display = word
            elif noun in cap:
                display = noun
            else:
                reject(code, play, "not a dictionary word")
                continue
        else:
            # it_IT stores many nouns as a bare root plus endings ("cas" + a/e): accept any
            # hunspell full form there and let the lemma filter decide.
            if word not in lower and not (code in FULL_FORM_LANGS and forms.get(play) == word):
                reject(code, play, "not a dictionary word")
                continue
            if zipf < ZIPF_HOMOGRAPH and word[:1].upper() + word[1:] in cap:
                reject(code, play, "proper name")
                continue
            display = word
        if morph is not None:
            if not morph.lemma_ok(word):
                reject(code, play, "inflected form or function word")
                continue
        elif not simplemma_ok(code, display, require_known=code not in FULL_FORM_LANGS):
            reject(code, play, "inflected form or function word")
            continue
        if code != "en" and _looks_english(word, zipf):
            reject(code, play, "foreign word")
            continue
        seen.add(play)
        out.append((play, display, zipf))
    return out


def with_sharp_s(words: Iterable[str], lower: set[str], cap: set[str]) -> Iterator[str]:
    """wordfreq folds ß to ss ("strasse"): give back the dictionary's ß spelling (Straße).

    Every ß spelling the dictionary has is yielded, then the ss spelling if the dictionary has
    that too (Masse and Maße); the frequency is looked up on the folded form either way.
    """
    for word in words:
        if "ss" not in word:
            yield word
            continue
        parts = word.split("ss")
        variants = set()
        for mask in range(1, 2 ** (len(parts) - 1)):
            joined = parts[0]
            for i, part in enumerate(parts[1:]):
                joined += ("ß" if mask >> i & 1 else "ss") + part
            variants.add(joined)
        for variant in sorted(variants):
            if variant in lower or variant[:1].upper() + variant[1:] in cap:
                yield variant
        yield word


def it_clitic_form(word: str, lower: set[str]) -> bool:
    """An Italian verb form with pronouns attached (dirti, farla, vederlo, facci, dammi)."""
    import simplemma

    # A noun or adjective of its own (valle, stalla, ditta, burla) is no verb form.
    if simplemma.is_known(word, lang="it") and simplemma.lemmatize(word, lang="it") == word:
        return False
    if IT_SHORT_IMPERATIVE.fullmatch(word):
        return True
    for clitic in IT_CLITICS:
        base = word[: -len(clitic)]
        if word.endswith(clitic) and len(base) >= 2:
            # dir+ti -> dire, veder+lo -> vedere, far+la -> fare; parlan+do+ne is too rare here.
            if base.endswith("r") and (base + "e" in lower or base + "re" in lower):
                return True
            if base.endswith(("ando", "endo")):
                return True
    return False


_NAMES: set[str] = set()


def english_names(cache: Path) -> set[str]:
    """Lower-cased proper names of the English hunspell (Bruno, Dover, Vichy): never answers."""
    if not _NAMES:
        root = ensure_debs(cache, "en")[0].with_suffix(".dic")
        lower, cap = set(), set()
        for line in root.read_text("utf-8").splitlines()[1:]:
            stem = line.split("/", 1)[0]
            (cap if stem[:1].isupper() else lower).add(stem.lower())
        _NAMES.update(cap - lower)
    return _NAMES


def _looks_english(word: str, zipf: float) -> bool:
    """A loan that is much more frequent in English than here (online, show, weekend)."""
    import wordfreq

    return word.isascii() and wordfreq.zipf_frequency(word, "en") > zipf + 1.0


def kk_sources(data: Path) -> tuple[dict[str, int], dict[str, set[str]]]:
    """Unilex counts (as spelled) and apertium-kaz lemmas by continuation class."""
    counts: dict[str, int] = {}
    for line in (data / "kk" / "unilex_kk.txt").read_text("utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    classes: dict[str, set[str]] = defaultdict(set)
    in_common = False
    entry = re.compile(r"^\s*([^!:;\s%]+(?:%.[^!:;\s%]*)*):([^!;\s]+)\s+([A-Za-z0-9\-Ә]+)\s*;")
    for line in (data / "kk" / "apertium-kaz.kaz.lexc").read_text("utf-8").splitlines():
        if line.startswith("LEXICON"):
            in_common = line.split()[1] == "Common"
            continue
        if not in_common:
            continue
        m = entry.match(line)
        if m:
            classes[m.group(3)].add(m.group(1).replace("%", ""))
    return counts, classes


def kk_candidates(lang: Language, data: Path) -> tuple[list[tuple[str, str, float]], set[str]]:
    counts, classes = kk_sources(data)
    good = {"N1", "A1", "A2", "A4"}
    lemmas = {w for cls in good for w in classes.get(cls, ())}
    every = {w for ws in classes.values() for w in ws}
    out = []
    for lemma in lemmas:
        if lemma != lemma.lower():
            continue
        play = playable(lang, lemma)
        if play is None:
            continue
        n = counts.get(lemma, 0)
        if n == 0 or counts.get(lemma[:1].upper() + lemma[1:], 0) > n:
            continue  # unseen, or seen mostly capitalised (a name)
        out.append((play, lemma, float(n)))
    # Verbs are cited in the -у infinitive (жаз -> жазу, сөйле -> сөйлеу, оқы -> оқу); keep the
    # infinitives the corpus has seen.
    for verb in classes.get("V-TV", set()) | classes.get("V-IV", set()):
        if verb != verb.lower() or not verb:
            continue
        infinitive = verb[:-1] + "у" if verb[-1] == "ы" else verb + "у"
        if verb[-1] in "іиуюү":
            continue
        play = playable(lang, infinitive)
        n = counts.get(infinitive, 0)
        if play is not None and n > 0:
            out.append((play, infinitive, float(n)))
    out.sort(key=lambda t: -t[2])
    extra = {p for w in every if w == w.lower() and (p := playable(lang, w))}
    return out, extra


_UZ_NEW_TO_1995 = {"ö": "oʻ", "ğ": "gʻ", "ş": "sh", "ç": "ch", "'": "ʼ"}


def uz_from_new(word: str) -> str:
    """zirhuzmorph's new Latin (ö ğ ş ç) back to 1995 Latin; a plain s+h gets its ʼ separator."""
    word = re.sub(r"s(?=h)", "sʼ", word)
    word = re.sub(r"c(?=h)", "cʼ", word)
    return "".join(_UZ_NEW_TO_1995.get(ch, ch) for ch in word)


def uz_candidates(lang: Language) -> tuple[list[tuple[str, str, float]], set[str]]:
    import csv
    import importlib.resources as res

    zdata = res.files("zirhuzmorph") / "data"
    udata = res.files("uzmorph") / "data"
    uz_pos: dict[str, set[str]] = defaultdict(set)
    with (udata / "root.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            stem = lang.normalise(row["stem"])
            uz_pos[stem].add(row["pos"])
    allowed = {p for w in uz_pos if (p := playable(lang, w))}
    out = []
    seen: set[str] = set()
    rows = []
    for name in ("lexicon.tsv", "lexicon_lugat.tsv", "lexicon_auto.tsv"):
        for line in (zdata / name).read_text("utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) < 5:
                continue
            word, pos, src, freq = parts[0], parts[1], parts[2], int(parts[3] or 0)
            play = playable(lang, uz_from_new(word))
            if play is None:
                continue
            allowed.add(play)
            rows.append((play, pos, src, freq))
    rows.sort(key=lambda r: -r[3])
    for play, pos, src, freq in rows:
        if pos != "N" or src == "closed" or play in seen or freq < 20:
            continue
        tags = uz_pos.get(play, set())
        # Content words only: uzmorph must know the stem as a noun or adjective and as nothing
        # closed-class (pronoun, conjunction, particle, postposition, modal, auxiliary).
        if not tags & {"NOUN", "ADJ"} or tags & {
            "PRN",
            "CNJ",
            "PRT",
            "ADP",
            "MOD",
            "AUX",
            "INTJ",
            "NUM",
            "IMIT",
            "PPN",
            "ADV",
        }:
            continue
        seen.add(play)
        out.append((play, play, float(freq)))
    return out, allowed


def uz_hunspell(lang: Language, paths: list[Path]) -> set[str]:
    """hunspell-uz is a Cyrillic full-form list without affixes: transliterate it to Latin."""
    from zirhuzmorph.translit import lotinga

    out = set()
    for path in paths:
        for line in path.with_suffix(".dic").read_text("utf-8", errors="replace").splitlines()[1:]:
            word = line.split("/", 1)[0].strip()
            if not word or word[:1].isupper():
                continue
            play = playable(lang, lotinga(word, unicode_apostrof=True))
            if play is not None:
                out.add(play)
    return out


def frequent_guesses(code: str, lang: Language) -> set[str]:
    """Every word of the frequency list at ZIPF_GUESS or above, in play form (guesses only).

    wordfreq's ß-folded German forms (strasse) stay playable as the Swiss spelling.
    """
    import wordfreq

    out = set()
    for word in wordfreq.top_n_list(code, 200_000):
        if wordfreq.zipf_frequency(word, code) < ZIPF_GUESS:
            break
        if word.isalpha() or (APOSTROPHES & set(word) and code == "uk"):
            spellings = [word]
            if code == "de" and "ss" in word:
                spellings += sharp_s_spellings(word)
            for spelling in spellings:
                play = playable(lang, spelling)
                if play is not None:
                    out.add(play)
    return out


def sharp_s_spellings(word: str) -> list[str]:
    """The ß spellings of a folded German word (fussweg -> Fußweg) that simplemma knows."""
    import simplemma

    parts = word.split("ss")
    out = []
    for mask in range(1, 2 ** (len(parts) - 1)):
        joined = parts[0]
        for i, part in enumerate(parts[1:]):
            joined += ("ß" if mask >> i & 1 else "ss") + part
        if simplemma.is_known(joined, lang="de") or simplemma.is_known(joined.title(), lang="de"):
            out.append(joined)
    return out


def unilex_guesses(lang: Language, path: Path, *, cyrillic_uz: bool = False) -> set[str]:
    """Lower-case Unilex forms seen UNILEX_GUESS_COUNT times or more (kk; uz transliterated)."""
    out = set()
    if cyrillic_uz:
        from zirhuzmorph.translit import lotinga
    for line in path.read_text("utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) != 2 or not parts[1].isdigit() or int(parts[1]) < UNILEX_GUESS_COUNT:
            continue
        word = parts[0]
        if not word.isalpha() or word != word.lower():
            continue
        if cyrillic_uz:
            word = lotinga(word, unicode_apostrof=True)
        play = playable(lang, word)
        if play is not None:
            out.add(play)
    return out


# --- selection and output ----------------------------------------------------------------
def select_answers(
    lang: Language,
    cands: list[tuple[str, str, float]],
    excluded: dict[str, str],
    blocklist: set[str],
    allowed: set[str],
    zipf_scale: bool,
) -> dict[int, list[tuple[str, str]]]:
    """Answers by length, most frequent first; ``excluded`` maps a play form to its reason."""
    offensive = offensive_blocklist(lang.code)
    by_len: dict[int, list[tuple[str, str]]] = {n: [] for n in LENGTHS}
    taken: set[str] = set()
    for play, display, score in cands:
        n = length_of(lang, play)
        if play in excluded:
            reject(lang.code, play, excluded[play])
            continue
        if offensive.blocks_answer(display) or offensive.blocks_answer(play):
            reject(lang.code, play, "offensive (curated blocklist)")
            continue
        if play in blocklist or display.lower() in blocklist:
            reject(lang.code, play, "hand blocklist (names, non-words, inflected)")
            continue
        if play not in allowed:
            reject(lang.code, play, "not a dictionary word")
            continue
        picked = by_len[n]
        if play in taken:
            continue
        if len(picked) >= MAX_ANSWERS[n]:
            continue
        if zipf_scale and score < ZIPF_MIN and len(picked) >= MIN_ANSWERS[n]:
            continue
        picked.append((play, display))
        taken.add(play)
    return by_len


def write_lists(
    code: str,
    lang: Language,
    answers: dict[int, list[tuple[str, str]]],
    allowed: set[str],
    excluded: set[str],
) -> dict[int, tuple[int, int]]:
    out = HERE / code
    out.mkdir(exist_ok=True)
    counts = {}
    for n in LENGTHS:
        ans = sorted(answers[n])
        lines = [p if p == d or lang.normalise(d) != p else f"{p}\t{d}" for p, d in ans]
        (out / f"answers-{n}.txt").write_text("".join(f"{ln}\n" for ln in lines), "utf-8")
        allow = sorted({w for w in allowed if length_of(lang, w) == n} | {p for p, _ in ans})
        (out / f"allowed-{n}.txt").write_text("".join(f"{w}\n" for w in allow), "utf-8")
        counts[n] = (len(ans), len(allow))
    (out / "excluded.txt").write_text(
        "# Stop words and offensive words (stopwordsiso, naughty-words), normalised, 4-6 tiles.\n"
        "# Generated by wordlists/build.py; tests check that no answer is listed here.\n"
        + "".join(f"{w}\n" for w in sorted(excluded)),
        "utf-8",
    )
    return counts


def build(code: str, data: Path, cache: Path) -> dict[int, tuple[int, int]]:
    lang = get_language(code)
    log(f"[{code}] sources")
    paths = ensure_debs(cache, code)
    blocklist = {lang.normalise(w) for w in read_lines(HERE / code / "blocklist.txt")}
    stops = stop_words(code)
    if code in ("ru", "uk"):
        # stopwords-iso's Russian list also holds ~100 of the commonest content words (вода,
        # книга, улица): keep only what pymorphy3 does not call a noun, adjective or infinitive.
        morph = Pymorphy(code)
        stops = {w for w in stops if not morph.lemma_ok(w)}
    naughty = naughty_words(cache, code)
    excluded = {
        p: ("offensive (naughty-words)" if w in naughty else "stop word")
        for w in sorted(stops | naughty)
        if " " not in w and (p := playable(lang, w))
    }
    if code == "uz":
        cands, allowed = uz_candidates(lang)
        allowed |= uz_hunspell(lang, paths)
        allowed |= unilex_guesses(lang, data / "uz" / "unilex_uz.txt", cyrillic_uz=True)
        zipf_scale = False
    elif code == "kk":
        forms, _, _ = hunspell_forms(lang, paths, keep_capitalised=False)
        cands, extra = kk_candidates(lang, data)
        allowed = set(forms) | extra | unilex_guesses(lang, data / "kk" / "unilex_kk.txt")
        zipf_scale = False
    else:
        forms, lower, cap = hunspell_forms(lang, paths, keep_capitalised=(code == "de"))
        allowed = set(forms)
        cands = wordfreq_candidates(code, lang, forms, lower, cap, cache)
        if code == "de":
            # igerman98 is stem-poor for short forms: add frequent words hunspell accepts.
            import wordfreq

            dictionary = load_hunspell(paths[0])
            top = wordfreq.top_n_list("de", 60_000)
            for word in with_sharp_s(top, lower, cap):
                play = playable(lang, word)
                if (
                    play
                    and play not in allowed
                    and (dictionary.lookup(word) or dictionary.lookup(word[:1].upper() + word[1:]))
                ):
                    allowed.add(play)
        allowed |= frequent_guesses(code, lang)
        zipf_scale = True
    answers = select_answers(
        lang, cands, excluded, blocklist, allowed | {c[0] for c in cands}, zipf_scale
    )
    allowed |= {p for n in LENGTHS for p, _ in answers[n]}
    before = {n: set(read_answers(code, n)) for n in LENGTHS}
    counts = write_lists(code, lang, answers, allowed, set(excluded))
    write_removed(code, before, answers, cache)
    log(f"[{code}] " + "  ".join(f"{n}: {a}/{b}" for n, (a, b) in counts.items()))
    return counts


def read_answers(code: str, n: int) -> list[str]:
    path = HERE / code / f"answers-{n}.txt"
    if not path.exists():
        return []
    return [line.split("\t")[0] for line in path.read_text("utf-8").splitlines()]


def write_removed(
    code: str, before: dict[int, set[str]], answers: dict[int, list[tuple[str, str]]], cache: Path
) -> None:
    """Log (and keep in the cache) the previous answers this build dropped, by reason."""
    removed: dict[str, list[str]] = defaultdict(list)
    for n in LENGTHS:
        now = {p for p, _ in answers[n]}
        for play in sorted(before[n] - now):
            reason = REASONS[code].get(play, "displaced (size cap; more frequent words first)")
            removed[reason].append(play)
    summary = dict(sorted(removed.items()))
    (cache / f"removed-{code}.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1))
    log(f"[{code}] removed: " + ", ".join(f"{r}: {len(w)}" for r, w in summary.items()))


# --- measured quality (REVIEW.md) ----------------------------------------------------------
# Independent native word lists, used only to measure (never copied into the lists): Debian
# packages unpacked into the cache, or a PyPI package's lemma dictionary.
REFERENCE_DEBS: dict[str, tuple[str, str, str, str]] = {
    # lang -> (package, version, path inside the package, name and licence for REVIEW.md)
    "en": (
        "wordnet-base",
        "1:3.0-37",
        "usr/share/wordnet",
        "Princeton WordNet 3.0 lemmas (Debian wordnet-base; WordNet 3.0 licence, permissive)",
    ),
    "fr": (
        "wfrench",
        "1.2.7-2",
        "usr/share/dict/french",
        "Debian wfrench word list (GPL-2+, "
        "P. Leyland, C. Le Bars; not the Dicollecte dictionary we build from)",
    ),
    "es": (
        "wspanish",
        "1.0.30",
        "usr/share/dict/spanish",
        "Debian wspanish word list (public domain; the ispell espanol list, not RLA-ES)",
    ),
    "it": (
        "witalian",
        "1.10",
        "usr/share/dict/italian",
        "Debian witalian word list (GPL-3+, D. Salvetti; not the hunspell-it dictionary)",
    ),
}
SIMPLEMMA_NOTE = (
    "simplemma 2.0.0 lemma dictionary (PyPI, MIT; Wiktionary-derived lemma lists); the answers "
    "filter also uses simplemma, so its share of our secrets is high by construction"
)
ZIPF_COMMON = 3.0
SAMPLE_PER_LENGTH = 40


def reference_words(code: str, cache: Path) -> tuple[set[str], str] | None:
    """(words of an independent list, its name and licence), or None where none is offline."""
    if code in REFERENCE_DEBS:
        package, version, inner, note = REFERENCE_DEBS[code]
        root = cache / "ref" / package
        if not (root / inner).exists():
            debs = cache / "deb"
            debs.mkdir(parents=True, exist_ok=True)
            subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=debs, check=True)
            for deb in debs.glob(f"{package}_*.deb"):
                root.mkdir(parents=True, exist_ok=True)
                subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        if code == "en":
            words = set()
            for pos in ("noun", "verb", "adj", "adv"):
                for line in (root / inner / f"index.{pos}").read_text("utf-8").splitlines():
                    if line and not line.startswith(" "):
                        words.add(line.split(" ", 1)[0])
        else:
            text = (root / inner).read_bytes().decode("utf-8", errors="replace")
            words = {w for w in text.splitlines() if w and w == w.lower()}
        return words, note
    if code in ("kk", "uz"):
        return None
    from simplemma.strategies.dictionaries.dictionary_factory import DefaultDictionaryFactory

    dictionary = DefaultDictionaryFactory().get_dictionary(code)
    lemmas = {str(v, "utf-8") if isinstance(v, bytes) else v for v in dictionary.values()}
    if code != "de":
        return {w for w in lemmas if w == w.lower()}, SIMPLEMMA_NOTE
    # German nouns are capitalised. The list also keeps pre-1996 spellings (bewußt beside
    # bewusst), which wordfreq cannot tell apart (it folds ß): measure the current one only.
    lower = {w.lower() for w in lemmas}
    return {
        w.lower() for w in lemmas if not ("ß" in w and w.lower().replace("ß", "ss") in lower)
    }, SIMPLEMMA_NOTE


def read_lists(code: str, rev: str | None) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """(answers, allowed) by length, from the work tree or from git revision ``rev``."""

    def text(name: str) -> str:
        if rev is None:
            return (HERE / code / name).read_text("utf-8")
        return subprocess.run(
            ["git", "show", f"{rev}:wordlists/{code}/{name}"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    answers = {
        n: {ln.split("\t")[0] for ln in text(f"answers-{n}.txt").splitlines()} for n in LENGTHS
    }
    allowed = {n: set(text(f"allowed-{n}.txt").splitlines()) for n in LENGTHS}
    return answers, allowed


def measure(
    code: str, cache: Path, rev: str | None = None
) -> dict[int, tuple[int, float, float, float]]:
    """Per length: (common reference words, % of them our guesses accept, % of our secrets the
    reference knows). Common = Zipf >= ZIPF_COMMON in wordfreq (the whole list for kk/uz)."""
    import wordfreq

    ref = reference_words(code, cache)
    if ref is None:
        return {}
    lang = get_language(code)
    words, _ = ref
    answers, allowed = read_lists(code, rev)
    by_len: dict[int, set[str]] = defaultdict(set)
    common: dict[int, set[str]] = defaultdict(set)
    for word in words:
        if not word.isalpha():
            continue
        play = playable(lang, word)
        if play is None:
            continue
        n = length_of(lang, play)
        by_len[n].add(play)
        if wordfreq.zipf_frequency(word, code) >= ZIPF_COMMON:
            common[n].add(play)
    out = {}
    for n in LENGTHS:
        accepted = len(common[n] & allowed[n]) / max(1, len(common[n]))
        known = len(answers[n] & by_len[n]) / max(1, len(answers[n]))
        every = len(by_len[n] & allowed[n]) / max(1, len(by_len[n]))
        out[n] = (len(common[n]), 100 * accepted, 100 * known, 100 * every)
    return out


def missed_guesses(code: str, cache: Path, n: int, limit: int = 15) -> list[str]:
    """The most frequent common reference words our guesses still refuse (for REVIEW.md)."""
    import wordfreq

    ref = reference_words(code, cache)
    if ref is None:
        return []
    lang = get_language(code)
    _, allowed = read_lists(code, None)
    missed = {}
    for word in ref[0]:
        play = playable(lang, word) if word.isalpha() else None
        if play and length_of(lang, play) == n and play not in allowed[n]:
            zipf = wordfreq.zipf_frequency(word, code)
            if zipf >= ZIPF_COMMON:
                missed[play] = zipf
    return sorted(missed, key=lambda w: (-missed[w], w))[:limit]


def review_sample(code: str, n: int, seed: int = 3) -> list[str]:
    """SAMPLE_PER_LENGTH answers of ``code`` at ``n`` tiles (display forms), seeded, sorted."""
    path = HERE / code / f"answers-{n}.txt"
    shown = [ln.split("\t")[-1] for ln in path.read_text("utf-8").splitlines()]
    rng = random.Random(f"{seed}-{code}-{n}")
    return sorted(rng.sample(shown, min(SAMPLE_PER_LENGTH, len(shown))))


def write_review(cache: Path, before_rev: str | None = None, seed: int = 3) -> None:
    """REVIEW.md: measured coverage per language and length, and 40 seeded secrets per length."""
    parts = [
        "# Word-list review\n\n",
        "Regenerated by `python -m wordlists.build` (or `--review-only`). For each language: how\n"
        "the lists compare with an independent native word list, and a seeded sample of\n"
        f"{SAMPLE_PER_LENGTH} secrets per length for a native reader. Please flag any secret a\n"
        "native speaker would not know, or that is a name, abbreviation, foreign, inflected (not\n"
        "the dictionary form), a function word or offensive: add it to\n"
        "`wordlists/<lang>/blocklist.txt` (offensive words: `shared/domain/offensive.py`) and\n"
        "rebuild.\n\n",
        f"*Common* words of a reference list are those with Zipf >= {ZIPF_COMMON} in wordfreq. "
        "*Guesses accept* is the share of them that our allowed list of that length accepts "
        "(goal >= 99.5%); *secrets known* is the share of our answers that the reference lists; "
        "*all its words accepted* is the share of every word of the reference at that length "
        "(rare, archaic and technical words included) that our guesses accept.\n",
    ]
    if before_rev:
        parts.append(f"*Before* columns: the lists at git revision `{before_rev}`.\n")
    for code in LANGUAGE_CODES:
        lang = get_language(code)
        parts.append(f"\n## {code} — {lang.name} ({lang.native_name})\n\n")
        ref = reference_words(code, cache)
        if ref is None:
            parts.append(
                "Reference: none available offline (no independent native list of this language "
                "in Debian or on PyPI beyond the sources the lists are built from).\n"
            )
        else:
            now = measure(code, cache)
            old = measure(code, cache, before_rev) if before_rev else {}
            parts.append(f"Reference: {ref[1]}.\n\n")
            head = (
                "| tiles | common words | guesses accept | secrets known | all its words accepted |"
            )
            rule = "| --- | --- | --- | --- | --- |"
            if old:
                head += " guesses accept (before) | secrets known (before) | all (before) |"
                rule += " --- | --- | --- |"
            rows = [head, rule]
            for n in LENGTHS:
                c, acc, known, every = now[n]
                row = f"| {n} | {c:,} | {acc:.1f}% | {known:.1f}% | {every:.1f}% |"
                if old:
                    row += f" {old[n][1]:.1f}% | {old[n][2]:.1f}% | {old[n][3]:.1f}% |"
                rows.append(row)
            parts.append("\n".join(rows) + "\n")
            misses = {n: missed_guesses(code, cache, n) for n in LENGTHS}
            if any(misses.values()):
                parts.append("\nMost frequent common reference words still refused as guesses:\n\n")
                for n in LENGTHS:
                    parts.append(f"- {n}: " + (", ".join(misses[n]) or "none") + "\n")
        parts.append(f"\nSample ({SAMPLE_PER_LENGTH} secrets per length, seeded):\n\n")
        for n in LENGTHS:
            parts.append(f"- {n}: " + ", ".join(review_sample(code, n, seed)) + "\n")
    (HERE / "REVIEW.md").write_text("".join(parts), "utf-8")


def write_counts() -> None:
    """Rewrite the counts table at the end of SOURCES.md from the committed files."""
    path = HERE / "SOURCES.md"
    head = path.read_text("utf-8").split("## Counts")[0]
    rows = [
        "| lang | 4 answers / allowed | 5 answers / allowed | 6 answers / allowed |",
        "| --- | --- | --- | --- |",
    ]
    for code in LANGUAGE_CODES:
        cells = []
        for n in LENGTHS:
            answers = (HERE / code / f"answers-{n}.txt").read_text("utf-8").count("\n")
            allowed = (HERE / code / f"allowed-{n}.txt").read_text("utf-8").count("\n")
            cells.append(f"{answers:,} / {allowed:,}")
        rows.append(f"| {code} | " + " | ".join(cells) + " |")
    body = "## Counts (answers / allowed, by length in tiles)\n\n" + "\n".join(rows) + "\n"
    path.write_text(head + body, "utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("langs", nargs="*", default=list(LANGUAGE_CODES))
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "wordlists-data")
    parser.add_argument("--cache", type=Path, default=REPO / ".wordlists-cache")
    parser.add_argument(
        "--review-only", action="store_true", help="only rewrite REVIEW.md and the counts"
    )
    parser.add_argument(
        "--before", metavar="REV", help="git revision to measure in REVIEW.md's before columns"
    )
    args = parser.parse_args(argv)
    args.cache.mkdir(exist_ok=True)
    table = {}
    if not args.review_only:
        for code in args.langs:
            table[code] = build(code, args.data, args.cache)
    write_review(args.cache, args.before)
    write_counts()
    print("| lang | " + " | ".join(f"{n} answers / allowed" for n in LENGTHS) + " |")
    for code, counts in table.items():
        print(f"| {code} | " + " | ".join(f"{a} / {b}" for a, b in counts.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
