//! Reference Hermes agent for both dialects: demo and test peer.
