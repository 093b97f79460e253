"""Word lists for the 13 game languages, as data: ``<language>/answers-<n>.txt`` and
``allowed-<n>.txt`` (plus each language's ``blocklist.txt``), generated offline by
``python -m wordlists.build`` (never deployed) and committed. The runtime loader is the lexicon
adapter's (``shared.adapters.lexicon.load_word_list``); this package imports nothing from
``shared``."""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
"""The folder of the lists, one sub-folder per language code."""
