.PHONY: run test setup

run:
	scripts/run

test:
	scripts/test

setup:
	scripts/setup
