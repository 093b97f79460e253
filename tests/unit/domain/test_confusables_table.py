"""The generated UTS #39 table (``shared.domain.confusables_table``) matches its source data
and the skeleton built on it behaves as UTS #39 says."""

from __future__ import annotations

from infra import confusables
from shared.domain import confusables_table
from shared.domain.glyphs import skeleton


def test_table_is_what_the_build_script_makes_of_the_installed_data() -> None:
    assert confusables.TABLE.read_text(encoding="utf-8") == confusables.render(), (
        "stale: run python -m infra.confusables"
    )
    assert confusables_table.UNICODE_VERSION == "13.0.0"


def test_skeleton_maps_lookalikes_to_their_prototype() -> None:
    assert skeleton("fuсk") == "fuck"  # Cyrillic с
    assert skeleton("B0B") == "BOB"
    assert skeleton("Il1") == "lll"
    assert skeleton("m") == "rn"  # prototypes may be longer than the source
    assert skeleton("abc") == "abc"


def test_skeleton_is_idempotent_on_prototypes() -> None:
    for text in ("fuсk", "B0B", "ТОМАЅ", "paypal"):
        assert skeleton(skeleton(text)) == skeleton(text)
