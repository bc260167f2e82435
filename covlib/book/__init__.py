"""The book: the chapter runner, chapter set-up, papermill sweeps and the static site."""
