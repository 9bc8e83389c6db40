from memchat.models.agent import Agent
from memchat.models.api_key import ApiKey
from memchat.models.base import Base
from memchat.models.conversation import Conversation
from memchat.models.instance import Instance
from memchat.models.memory import Memory
from memchat.models.memory_event import MemoryEvent
from memchat.models.message import Message
from memchat.models.message_file import MessageFile
from memchat.models.user import User

__all__ = [
    "Agent",
    "ApiKey",
    "Base",
    "Conversation",
    "Instance",
    "Memory",
    "MemoryEvent",
    "Message",
    "MessageFile",
    "User",
]
