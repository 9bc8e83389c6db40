.PHONY: run test setup lock

run:
	scripts/run

test:
	scripts/test

setup:
	scripts/setup

# Writes requirements/*.txt again from pyproject.toml (after adding, removing or changing a dependency).
lock:
	scripts/lock
