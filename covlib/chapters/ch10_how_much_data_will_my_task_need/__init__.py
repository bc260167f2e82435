"""Chapter 10: how much data will my task need? Coverage's prediction, one rule fitted on two-hop and tested
unchanged on other tasks, and a reader's own composition (notebooks/10_how_much_data_will_my_task_need.py)."""
