"""One module per chapter, named after its notebook, holding what only that chapter uses."""
