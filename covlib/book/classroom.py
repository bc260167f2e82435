"""A path through the book for one class of 90 minutes: which chapters and sections, in what order, for how long,
and which exercise closes each stop. The site's landing page shows it (covlib.book.site); a test checks that every
section and exercise it names is in its chapter, and that the minutes add up."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CLASS_MINUTES = 90


@dataclass(frozen=True)
class Stop:
    """One stop of the class: a chapter (its number, "02"), the sections to go through, the minutes for them, the
    exercises to do there (numbers in the chapter's exercises) and the minutes for those, and what the class takes
    away from it."""

    chapter: str
    sections: tuple[str, ...]
    minutes: int
    exercises: tuple[int, ...]
    exercise_minutes: int
    takeaway: str

    @property
    def total(self) -> int:
        return self.minutes + self.exercise_minutes


CLASS_PATH: tuple[Stop, ...] = (
    Stop("01", ("1.1", "1.2", "1.3", "1.5"), 10, (1,), 5,
         "a task is a graph of random tables; training sees 70% of each table's facts; ID and OOD test types"),
    Stop("02", ("2.1", "2.2", "2.3"), 15, (1,), 5,
         "coverage: fragments that behave alike in k contexts can be swapped; which test items that reaches"),
    Stop("03", ("3.3", "3.4", "3.5"), 10, (1,), 5,
         "a trained transformer learns the covered ID items, the better covered first, and no OOD item"),
    Stop("04", ("4.1", "4.2"), 10, (1,), 5,
         "the data a model needs to generalise grows as a power of the number of tokens N"),
    Stop("07", ("7.1",), 10, (), 0,
         "writing the bridge out (chain of thought) lowers that power"),
    Stop("10", ("10.1", "10.6"), 10, (), 5,
         "coverage predicts the data a task needs before any training: each student tries a task of their own"),
)


def path_minutes(path: Sequence[Stop] = CLASS_PATH) -> int:
    return sum(stop.total for stop in path)


def section_range(sections: Sequence[str]) -> str:
    """"1.1, 1.2, 1.3, 1.5" -> "1.1-1.3, 1.5": consecutive sections of one chapter as a range."""
    parts: list[list[str]] = []
    for section in sections:
        chapter, number = section.split(".")
        if parts and parts[-1][-1].split(".")[0] == chapter and int(parts[-1][-1].split(".")[1]) + 1 == int(number):
            parts[-1].append(section)
        else:
            parts.append([section])
    return ", ".join(p[0] if len(p) == 1 else f"{p[0]}\u2013{p[-1]}" for p in parts)


def class_path_markdown(titles: dict[str, tuple[str, str]], path: Sequence[Stop] = CLASS_PATH) -> str:
    """The path as a Markdown section: a table of stops (start minute, chapter, sections, exercises, what to take
    away). ``titles`` maps a chapter's number to (its file stem, its title); a chapter not in it is named without a
    link."""
    lines = [f"## A {path_minutes(path)}-minute class", "",
             "A path through the book for one class. Each student opens the chapters of the student edition in "
             "JupyterLab (or reads its pages), runs a chapter once from the top, and answers the exercise of each "
             "stop in the chapter's parameters cell; the check under the exercise says whether the answer is "
             "right. Every chapter on the path runs at its default preset from the results the book ships, in at "
             "most a few minutes.", "",
             "| Minutes | Chapter | Sections | Exercises | What the class takes away |",
             "|---|---|---|---|---|"]
    start = 0
    for stop in path:
        stem, title = titles.get(stop.chapter, (None, f"Chapter {int(stop.chapter)}"))
        chapter = f"[{title}]({stem}.ipynb)" if stem else title
        exercises = (", ".join(map(str, stop.exercises)) + f" ({stop.exercise_minutes} min)" if stop.exercises
                     else f"your own task ({stop.exercise_minutes} min)" if stop.exercise_minutes else "\u2013")
        lines.append(f"| {start}\u2013{start + stop.total} | {chapter} | {section_range(stop.sections)} "
                     f"({stop.minutes} min) | {exercises} | {stop.takeaway} |")
        start += stop.total
    lines += ["", "Chapters 5, 6, 8 and 9 (inside the model, path ambiguity, three ways to generalise, diversity "
              "against coverage) and the rest of each chapter's exercises make a second class or homework."]
    return "\n".join(lines)
