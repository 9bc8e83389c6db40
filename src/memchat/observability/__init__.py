"""What an operator sees of a running memchat: metrics, traces, logs, probes."""
