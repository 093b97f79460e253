"""Unit tests: error codes (shared/protocol/errors.py)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import shared.domain
import shared.domain.errors as domain_errors
from shared.domain.errors import DomainError
from shared.protocol.errors import PARSE_CODES, ErrorCode, ProtocolError, describe


def _all_subclasses(cls: type[DomainError]) -> set[type[DomainError]]:
    found: set[type[DomainError]] = {cls}
    for sub in cls.__subclasses__():
        found |= _all_subclasses(sub)
    return found


def _import_whole_domain() -> None:
    # A DomainError subclass defined outside errors.py only exists once its module is imported.
    for module in pkgutil.walk_packages(shared.domain.__path__, "shared.domain."):
        importlib.import_module(module.name)


def test_error_code_covers_every_domain_error_code() -> None:
    _import_whole_domain()
    classes = _all_subclasses(DomainError)
    assert len(classes) > 20  # the module was really imported and walked
    missing = {cls.__name__: cls.code for cls in classes if cls.code not in set(ErrorCode)}
    assert not missing, f"add these domain codes to ErrorCode: {missing}"


def test_every_domain_error_class_in_the_module_is_covered() -> None:
    # Also catches subclasses the recursion could miss (e.g. imported under another base).
    for value in vars(domain_errors).values():
        if isinstance(value, type) and issubclass(value, DomainError):
            assert ErrorCode(value.code)


def test_protocol_and_service_codes_exist() -> None:
    expected = {
        "message_too_large",
        "invalid_json",
        "not_an_object",
        "unknown_action",
        "missing_field",
        "unknown_field",
        "wrong_type",
        "field_too_long",
        "invalid_value",
        "no_session",
        "invalid_token",
        "session_replaced",
        "rate_limited",
        "try_again",
        "internal_error",
        "not_found",
    }
    assert expected <= {code.value for code in ErrorCode}
    assert len(PARSE_CODES) == 9


def test_codes_are_unique_snake_case_strings() -> None:
    values = [code.value for code in ErrorCode]
    assert len(values) == len(set(values))
    assert all(re.fullmatch(r"[a-z][a-z_]*[a-z]", value) for value in values)
    assert all(code == code.value for code in ErrorCode)  # StrEnum: compares as its string


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_code_has_an_english_description(code: ErrorCode) -> None:
    text = describe(code)
    assert text
    assert text[0].isupper()
    assert text.endswith(".")
    assert describe(code.value) == text


def test_describe_an_unknown_code_falls_back_instead_of_raising() -> None:
    assert describe("no_such_code") == describe(ErrorCode.INTERNAL_ERROR)


def test_protocol_error_carries_code_message_request_id_and_field() -> None:
    error = ProtocolError(ErrorCode.WRONG_TYPE, request_id="r", field="word")
    assert (error.code, error.request_id, error.field) == (ErrorCode.WRONG_TYPE, "r", "word")
    assert error.message == describe(ErrorCode.WRONG_TYPE)
    assert str(error) == error.message
    assert isinstance(error, ValueError)
    assert "wrong_type" in repr(error)
