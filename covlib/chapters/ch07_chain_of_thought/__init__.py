"""Chapter 7 (chain of thought): required data with the bridge written out, decoding, IICG over the sequence."""
