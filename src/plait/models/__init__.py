"""Language models: the neutral protocol, providers, scripted models and prices."""

from plait.models.base import (
    AssistantMessage,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    RetryHook,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from plait.models.pricing import DEFAULT_PRICES, Price, PriceTable
from plait.models.scripted import FunctionModel, ScriptedModel, ScriptTurn

__all__ = [
    "DEFAULT_PRICES",
    "AssistantMessage",
    "FunctionModel",
    "Message",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "Price",
    "PriceTable",
    "RetryHook",
    "ScriptTurn",
    "ScriptedModel",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
]
