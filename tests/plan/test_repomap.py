from __future__ import annotations

from pathlib import Path

from plan_helpers import git, make_repo

from plait.plan import repo_map, tracked_files

SOURCES: dict[str, str | bytes] = {
    "app/money.py": (
        "from decimal import Decimal\n\n\n"
        "class Money(Base, frozen=True):\n"
        "    amount: Decimal\n"
        "    _cache: dict\n\n"
        "    def __init__(self, amount: Decimal) -> None: ...\n"
        "    def add(self, other: 'Money') -> 'Money': ...\n"
        "    def _round(self): ...\n\n\n"
        "async def fetch_rate(code: str, *, timeout: float = 5.0) -> Decimal: ...\n\n\n"
        "def _private(): ...\n"
    ),
    "app/broken.py": "def oops(:\n",
    "tests/test_money.py": (
        "def test_a(): ...\n\n\ndef test_b(): ...\n\n\nclass TestMoney: ...\n\n\ndef helper(): ...\n"
    ),
    "web/api.ts": (
        "import x from 'y';\n"
        "export async function getUser(id: string): Promise<User> {\n"
        "  return fetch(id);\n}\n"
        "export class UserStore {\n  load() {}\n}\n"
        "export interface User {\n  id: string;\n}\n"
        "export const LIMIT = 10;\n"
        "type Id = string;\n"
    ),
    "svc/main.go": (
        "package main\n\ntype Server struct {\n}\n\n"
        "func (s *Server) Serve(addr string) error {\n}\n\nfunc main() {\n}\n"
    ),
    "core/lib.rs": (
        "pub struct Engine {\n}\n\nimpl Engine {\n    pub fn run(&self) {}\n}\n\npub fn start() -> Engine {\n}\n"
    ),
    "docs/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00binary",
    "README.md": "# app\n",
}


def _sized(path: str) -> str:
    return f"{path} ({len(SOURCES[path])} B)"


def test_the_map_lists_files_with_sizes_and_top_level_definitions(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", SOURCES)
    (root / "untracked.py").write_text("def secret(): ...\n")
    text = repo_map(root)

    assert text.startswith("8 files tracked by git, ")
    assert "untracked.py" not in text and "secret" not in text
    assert (
        _sized("app/money.py") + "\n"
        "  class Money(Base, frozen=True): fields amount; __init__, add\n"
        "  async def fetch_rate(code: str, *, timeout: float = 5.0) -> Decimal\n"
    ) in text
    assert "_private" not in text and "_round" not in text and "_cache" not in text
    assert _sized("app/broken.py") + "\n  (does not parse)\n" in text
    assert _sized("tests/test_money.py") + "\n  2 test functions, 1 test class\n" in text
    assert (
        _sized("web/api.ts") + "\n"
        "  export async function getUser(id: string): Promise<User>\n"
        "  export class UserStore\n"
        "  export interface User\n"
        "  export const LIMIT = 10;\n"
        "  type Id = string;\n"
    ) in text
    assert (
        _sized("svc/main.go") + "\n  type Server struct\n  func (s *Server) Serve(addr string) error\n  func main()\n"
        in text
    )
    assert _sized("core/lib.rs") + "\n  pub struct Engine\n  impl Engine\n  pub fn start() -> Engine\n" in text
    # as the header says, the project's own source comes first, then its other files, tests, and binaries last
    order = [text.index(p) for p in ("core/lib.rs", "svc/main.go", "README.md", "tests/test_money.py", "docs/logo.png")]
    assert order == sorted(order)
    assert repo_map(root) == text


def test_tracked_files_are_the_regular_files_git_knows(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "", "sub/b.py": "", "gone.py": ""})
    (root / "gone.py").unlink()
    (root / "new.py").write_text("")
    (root / "link.py").symlink_to(root / "a.py")
    git(root, "add", "link.py")
    assert tracked_files(root) == ["a.py", "sub/b.py"]


def test_a_large_repository_is_cut_to_the_budget_keeping_the_most_used_modules(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"pkg/core.py": "def central(x: int) -> int: ...\n"}
    for i in range(120):
        body = "from pkg import core\n\n" if i % 2 == 0 else ""
        body += "".join(f"def function_{i}_{j}(argument_{j}: int) -> int: ...\n" for j in range(6))
        files[f"pkg/sub{i % 7}/mod_{i:03}.py"] = body
    for i in range(40):
        files[f"data/d{i}.json"] = "{}\n"
    root = make_repo(tmp_path / "big", files)

    text = repo_map(root, budget=4000)
    assert len(text) <= 4000
    assert "pkg/core.py (32 B)\n  def central(x: int) -> int\n" in text
    assert "Not listed above: " in text and "data/ " in text
    listed = sum(line.endswith(")") and not line.startswith(" ") for line in text.splitlines()[1:])
    not_listed = int(text.split("Not listed above: ")[1].split(" files")[0])
    assert listed + not_listed == 161
    assert repo_map(root, budget=4000) == text


def test_a_tiny_budget_still_gives_a_summary(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"d{i}/f.py": "def f(): ...\n" for i in range(200)}
    root = make_repo(tmp_path / "many", files)
    text = repo_map(root, budget=600)
    assert len(text) <= 700
    assert "Not listed above" in text and "more directories" in text


def _module(name: str, n: int) -> str:
    return "".join(f"def {name}_{i}(request: Request, *, timeout: float = 5.0) -> Response: ...\n" for i in range(n))


def test_the_definitions_go_to_the_projects_own_source_not_to_examples_tests_or_binary_files(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "src/pkg/__init__.py": "from pkg.app import app_0\nfrom pkg.ctx import ctx_0\n",
        **{f"src/pkg/{name}.py": _module(name, 12) for name in ("app", "ctx", "sessions", "config", "cli")},
        "examples/tutorial/db.py": "from pkg import app\n\n\ndef get_db(): ...\n\n\ndef init_db(): ...\n",
        "tests/test_app.py": "from pkg import app, ctx, sessions\n\n\ndef test_a(): ...\n",
        "docs/shot.png": b"\x89PNG\r\n\x1a\n" + bytes(5000),
        "docs/logo.png": b"\x89PNG\r\n\x1a\n" + bytes(3000),
        "uv.lock": "version = 1\n" * 3000,
        "README.md": "# pkg\n",
    }
    root = make_repo(tmp_path / "flaskish", files)
    text = repo_map(root, budget=2600)

    assert len(text) <= 2600
    assert "the most central source files show their top-level definitions" in text.splitlines()[0]
    for name in ("app", "ctx", "sessions", "config", "cli"):  # each module of the package shows its first ones
        assert f"src/pkg/{name}.py (" in text and f"  def {name}_0(request: Request" in text, name
    # the package's definitions are cut, so the example's get none
    assert "more definitions" in text and "examples/tutorial/db.py (" in text and "get_db" not in text
    # binary and lock files take no lines of their own: they are counted with the files not listed
    assert ".png (" not in text and "uv.lock (" not in text
    assert "  ./ 1 file (" in text and "  docs/ 2 files (" in text
    assert repo_map(root, budget=2600) == text
