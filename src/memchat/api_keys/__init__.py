"""API keys: long-lived bearer credentials for data access: making, looking up and storing them.

Their routes are the account's (memchat.auth.keys_router), beside the login they need.
"""
