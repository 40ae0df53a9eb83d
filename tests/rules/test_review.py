"""One review derives what every rule asks of the same subjects once, and nothing outlives it."""

from __future__ import annotations

from components.rules import review


def test_a_question_is_answered_once_per_review_and_again_outside_one() -> None:
    asked: list[int] = []

    @review.once
    def pools(subjects: list[str]) -> list[str]:
        asked.append(len(subjects))
        return sorted(subjects)

    subjects = ["b", "a"]
    with review.review():
        assert pools(subjects) == ["a", "b"] and pools(subjects) == ["a", "b"]
        assert pools(["c"]) == ["c"]  # other subjects, another answer
        with review.review():  # a nested review shares the outer one
            pools(subjects)
    assert asked == [2, 1]
    subjects.append("c")
    assert pools(subjects) == ["a", "b", "c"]  # outside a review, every call reads the subjects as they are now
    assert asked == [2, 1, 3]


def test_a_question_of_two_subjects_is_answered_per_pair() -> None:
    asked: list[tuple[str, str]] = []

    @review.once
    def pair(a: str, b: str) -> str:
        asked.append((a, b))
        return a + b

    x, y, z = "x", "y", "z"
    with review.review():
        assert [pair(x, y), pair(x, z), pair(z, y), pair(x, y)] == ["xy", "xz", "zy", "xy"]
    assert asked == [("x", "y"), ("x", "z"), ("z", "y")]
