"""One folder per paper: its experiment grid, its reported numbers, its report code."""
