import pytest

from tally.cli import main


@pytest.fixture
def ledger_file(tmp_path):
    path = tmp_path / "tally.json"
    assert main(["--file", str(path), "init", "alice", "bob", "carol"]) == 0
    return path


def run(ledger_file, *args):
    return main(["--file", str(ledger_file), *args])


def test_init_refuses_to_overwrite(ledger_file, capsys):
    assert run(ledger_file, "init", "dave") == 1
    assert "already exists" in capsys.readouterr().err


def test_add_and_settle(ledger_file, capsys):
    assert run(ledger_file, "add", "Dinner at Luigi's", "90", "--paid-by", "alice") == 0
    assert run(ledger_file, "add", "Train tickets", "60", "--paid-by", "bob") == 0
    assert run(ledger_file, "add", "Museum", "24", "--paid-by", "carol", "--exact", "alice=12,carol=12") == 0
    capsys.readouterr()
    assert run(ledger_file, "settle") == 0
    out = capsys.readouterr().out
    assert "carol pays alice 28.00" in out
    assert "carol pays bob 10.00" in out


def test_add_with_weights(ledger_file, capsys):
    assert run(ledger_file, "add", "Boat", "90", "--paid-by", "alice", "--weights", "alice=1,bob=2") == 0
    assert "Added Boat: 90.00" in capsys.readouterr().out
    assert run(ledger_file, "report") == 0
    assert "bob    -60.00" in capsys.readouterr().out


def test_add_among_some(ledger_file, capsys):
    assert run(ledger_file, "add", "Taxi", "20", "--paid-by", "bob", "--among", "alice, bob") == 0
    capsys.readouterr()
    assert run(ledger_file, "settle") == 0
    out = capsys.readouterr().out
    assert "alice pays bob 10.00" in out
    assert "carol" not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "Taxi", "ten", "--paid-by", "bob"], "not an amount"),
        (["add", "Taxi", "10", "--paid-by", "dave"], "dave is not in the ledger"),
        (["add", "Taxi", "10", "--paid-by", "bob", "--exact", "alice=4,bob=5"], "add up to 9.00"),
    ],
)
def test_errors_are_reported(ledger_file, capsys, args, message):
    assert run(ledger_file, *args) == 1
    assert message in capsys.readouterr().err


def test_missing_ledger(tmp_path, capsys):
    assert main(["--file", str(tmp_path / "none.json"), "report"]) == 1
    assert "tally init" in capsys.readouterr().err
