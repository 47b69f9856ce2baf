.PHONY: check test lint types demo lock

check:
	scripts/check

test:
	scripts/test

lint:
	.venv/bin/ruff check src tests benchmarks && .venv/bin/ruff format --check src tests benchmarks

types:
	.venv/bin/mypy

demo:
	scripts/demo

# Re-pin every dependency (runtime and dev) after editing pyproject.toml.
lock:
	.venv/bin/pip-compile --quiet --extra dev --strip-extras --no-emit-options --output-file requirements.lock pyproject.toml
