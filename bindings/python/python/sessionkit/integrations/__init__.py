"""Adapters for the session interfaces of agent frameworks.

Each adapter is imported on its own (``sessionkit.integrations.openai_agents``)
so that its framework stays an optional dependency.
"""
