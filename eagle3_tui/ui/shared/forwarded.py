"""`Forwarded`: an attribute of a part of a screen, read and set through the screen.

The main screen's panes own their state; the app and the tests still read it through the
screen by the names they have always used (`main.shown` is the sample pane's `shown`).
"""

from __future__ import annotations

from typing import Generic, TypeVar, overload

T = TypeVar("T")


class Forwarded(Generic[T]):
    """An attribute of one of the screen's panes, read (and set) through the screen under the
    name the app and the tests know it by (`main.shown` is the sample pane's `shown`)."""

    def __init__(self, part: str, name: str | None = None) -> None:
        self.part, self.name = part, name or ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.name or name

    @overload
    def __get__(self, screen: None, owner: type | None = None) -> Forwarded[T]: ...

    @overload
    def __get__(self, screen: object, owner: type | None = None) -> T: ...

    def __get__(self, screen: object, owner: type | None = None) -> T | Forwarded[T]:
        if screen is None:
            return self
        value: T = getattr(getattr(screen, self.part), self.name)
        return value

    def __set__(self, screen: object, value: T) -> None:
        setattr(getattr(screen, self.part), self.name, value)
