"""Chapter 10: how much data will my task need? Coverage's prediction, one rule fitted on two-hop and tested
unchanged on other tasks, and a reader's own composition (notebooks/10_how_much_data_will_my_task_need.py)."""

# its modules, which the chapter's notebook calls through the package:
# `import covlib.chapters.ch10_how_much_data_will_my_task_need as ch10`, then `ch10.rule.fit_rule(...)`
from covlib.chapters.ch10_how_much_data_will_my_task_need import charts, reader, readings, rule, views

__all__ = ["charts", "reader", "readings", "rule", "views"]
