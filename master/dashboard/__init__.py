"""Master, observation: the web dashboard (server.py) and its page (static/)."""
