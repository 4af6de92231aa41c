//! Async connection engine around hermes-protocol: one task, select! over socket, commands and deadlines.
