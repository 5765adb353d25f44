"""Short TypeErrors from the C++ bindings: pybind11's "incompatible function arguments"
message prints every argument's repr, which for a policy array is the whole array. The
facade (:mod:`rebel`) wraps the functions that take arrays so the message names each
argument's type and shape instead."""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_MARKER = "incompatible function arguments"


def describe_argument(value: Any) -> str:
    """``ndarray float64 (465, 6)`` for an array, the type's name otherwise."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{type(value).__name__} {dtype} {tuple(shape)}"
    return type(value).__name__


def concise_type_errors(function: F) -> F:
    """``function`` whose argument TypeErrors keep pybind11's signature lines but name the given
    arguments by type and shape (``Invoked with: Game, ndarray float64 (465, 6)``)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except TypeError as e:
            message = str(e)
            if _MARKER not in message:
                raise
            given = [describe_argument(a) for a in args] + [f"{k}={describe_argument(v)}" for k, v in kwargs.items()]
            head = message.split("Invoked with:")[0].rstrip()
            raise TypeError(f"{head}\n\nInvoked with: {', '.join(given)}") from None

    return wrapper  # type: ignore[return-value]
