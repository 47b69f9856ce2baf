"""OS sandboxes for agents' commands: probed at start-up, chosen by strength, always with resource limits."""

from plait.workspace.sandbox._confinement import Confinement
from plait.workspace.sandbox.factory import sandboxed_shell
from plait.workspace.sandbox.probe import LayerName, Probe, probe
from plait.workspace.sandbox.runner import SandboxedShell
from plait.workspace.sandbox.seatbelt import seatbelt_argv, seatbelt_profile

__all__ = [
    "Confinement",
    "LayerName",
    "Probe",
    "SandboxedShell",
    "sandboxed_shell",
    "probe",
    "seatbelt_argv",
    "seatbelt_profile",
]
