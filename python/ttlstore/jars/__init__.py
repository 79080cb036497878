"""Where the wheel carries ttlstore's jar (``ttlstore-<version>.jar``, built by ``make jar``); no code."""
