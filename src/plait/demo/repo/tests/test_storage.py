import json

import pytest

from tally.storage import StorageError, load_ledger, save_ledger


def test_round_trip(tmp_path, trip):
    path = tmp_path / "trip.json"
    save_ledger(trip, path)
    loaded = load_ledger(path)
    assert loaded.people == trip.people
    assert loaded.expenses == trip.expenses
    assert loaded.balances() == trip.balances()


def test_amounts_are_stored_as_strings(tmp_path, trip):
    path = tmp_path / "trip.json"
    save_ledger(trip, path)
    data = json.loads(path.read_text())
    assert data["expenses"][0]["amount"] == "90.00"
    assert data["expenses"][0]["shares"] == {"alice": "30.00", "bob": "30.00", "carol": "30.00"}


def test_missing_file(tmp_path):
    with pytest.raises(StorageError, match="tally init"):
        load_ledger(tmp_path / "nope.json")


def test_malformed_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"version": 1, "people": ["alice"]}')
    with pytest.raises(StorageError, match="malformed"):
        load_ledger(path)


def test_unknown_version(tmp_path):
    path = tmp_path / "future.json"
    path.write_text('{"version": 99}')
    with pytest.raises(StorageError, match="unsupported"):
        load_ledger(path)
