"""The rule presets: strict (the default for parallel runs), standard and trusted."""

from __future__ import annotations

from typing import Any

__all__ = ["PRESETS", "SECRET_PATHS"]

SECRET_PATHS = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh",
    "~/.config/hub",
    "~/.pypirc",
    "~/.npmrc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.config/plait",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.vault-token",
    "~/.terraform.d/credentials.tfrc.json",
)
"""Read by no agent's command, whatever the preset: keys, tokens and cloud credentials."""

_GIT_STATE = {
    "name": "git-state",
    "verdict": "deny",
    "prefix": [
        "git",
        [
            "commit",
            "push",
            "add",
            "rm",
            "mv",
            "reset",
            "checkout",
            "switch",
            "restore",
            "stash",
            "rebase",
            "merge",
            "cherry-pick",
            "revert",
            "pull",
            "fetch",
            "update-ref",
            "update-index",
            "worktree",
            "gc",
            "am",
            "submodule",
            "filter-branch",
            "notes",
            "replace",
        ],
    ],
    "reason": "plait owns this worktree's git state and commits your changes itself when you finish",
    "instead": "edit the files and leave committing to plait; read-only git works (status, diff, log, show, blame)",
    "match": ["git commit -am x", "cd src && git -C .. push origin main"],
    "not_match": ["git status", "git diff HEAD", "git log --oneline"],
}
_ELEVATE = {
    "name": "elevate",
    "verdict": "deny",
    "prefix": [["sudo", "su", "doas", "pkexec"]],
    "reason": "commands run with the agent's own privileges only",
    "instead": "run the command without sudo, or say in your summary what needs an administrator",
}
_SYSTEM_DIRS = "bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|srv|usr|var"
_ROOTISH = rf"""["']?(/+\.?|/+\*|~/?|\$\{{?HOME\}}?/?|/+({_SYSTEM_DIRS})/?)["']?"""
_END = r"(\s|$|[;&|)])"
_DESTROY = {
    "name": "destroy",
    "verdict": "deny",
    "regex": (
        rf"(^|[\s;&|(`])(\S*/)?rm\s+(\S+\s+)*{_ROOTISH}{_END}"
        rf"|(^|[\s;&|(`])(\S*/)?find\s+(\S+\s+)*{_ROOTISH}\s.*(-delete|-exec\s+(\S*/)?(rm|shred|dd)\b)"
        r"|(^|[\s;&|(`])(\S*/)?(dd|shred|wipefs|blkdiscard)\s[^;&|]*(of=)?[\"']?/dev/(sd|vd|xvd|nvme|hd|mmcblk|dm-|md|mapper/)"
        r"|>\s*[\"']?/dev/(sd|vd|xvd|nvme|hd|mmcblk)"
        r"|\bmkfs(\.\w+)?\b|\b(shutdown|reboot|poweroff|halt)\b|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}"
    ),
    "reason": "it could destroy the machine's files or stop the machine",
    "instead": "remove only specific paths inside the worktree",
    "match": [
        "rm -rf /",
        'rm -rf "/"',
        "rm -rf //",
        "/bin/rm -rf /",
        "rm -rf /*",
        "rm -fr ~",
        "rm -rf ~/",
        "rm -rf $HOME",
        "rm --no-preserve-root -rf /",
        "cd x && rm -r /usr",
        "find / -delete",
        "find / -name '*.py' -delete",
        "find ~ -exec rm {} +",
        "dd if=/dev/zero of=/dev/vda",
        "shred /dev/sda",
        "echo x > /dev/sda",
        "sudo reboot",
        "mkfs.ext4 /dev/vdb",
    ],
    "not_match": [
        "rm -rf build/",
        "rm -f ./x",
        "rm -rf /tmp/x/build",
        "rm -rf ./usr",
        "find . -name '*.pyc' -delete",
        "find /tmp/x -delete",
        "dd if=/dev/zero of=disk.img bs=1M count=1",
        "ls /dev/sda",
    ],
}
_NET_TOOLS = ["curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "socat"]
_INSTALLS: list[list[Any]] = [
    ["pip*", ["install", "download"]],
    ["python*", "-m", "pip", ["install", "download"]],
    ["uv", ["add", "sync", "lock"]],
    ["uv", "pip", "install"],
    ["poetry", ["add", "install", "update", "lock"]],
    ["npm", ["install", "i", "ci", "add", "update"]],
    ["npx"],
    ["yarn", ["add", "install"]],
    ["pnpm", ["add", "install", "i"]],
    ["cargo", ["install", "add", "update", "fetch"]],
    ["go", ["get", "install"]],
    ["gem", "install"],
    [["apt", "apt-get", "dnf", "yum", "apk", "brew", "pacman", "snap"]],
]


def _tool(prefix: list[Any]) -> str:
    """A short name for an install rule: its first plain words, such as `python-pip` or `npm`."""
    words = [w.rstrip("*") for w in prefix if isinstance(w, str) and not w.startswith("-")]
    return "-".join(words[:2]) or str(prefix[0][0])


def _network_rules(verdict: str) -> list[dict[str, Any]]:
    why = {
        "deny": "the network is off under this preset",
        "ask": "it reaches the network, which needs the user's approval",
    }[verdict]
    instead = "work offline with what is installed; name any missing dependency in your finish summary"
    rules: list[dict[str, Any]] = [
        {"name": "network-tool", "verdict": verdict, "prefix": [_NET_TOOLS], "reason": why, "instead": instead}
    ]
    why_install = "installing packages: " + why
    rules += [
        {"name": f"install:{_tool(p)}", "verdict": verdict, "prefix": p, "reason": why_install, "instead": instead}
        for p in _INSTALLS
    ]
    return rules


_COMMON = [_GIT_STATE, _ELEVATE, _DESTROY]

PRESETS: dict[str, dict[str, Any]] = {
    "strict": {
        "network": "deny",
        "commands": [*_COMMON, *_network_rules("deny")],
        "paths": [],
    },
    "standard": {
        "network": "ask",
        "commands": [*_COMMON, *_network_rules("ask")],
        "paths": [],
    },
    "trusted": {
        "network": "allow",
        "commands": list(_COMMON),
        "paths": [
            {"name": "caches", "verdict": "allow", "access": "write", "path": "~/.cache"},
        ],
    },
}
"""Each preset: the network verdict, command rules and path rules (as plain data, validated on use)."""
