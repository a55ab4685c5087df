"""Recording: run a job with the samplers on and gather a profile bundle.

Apart from reading (the rest of `perfmodel.profile`): recording starts processes,
samplers and monitors; reading only turns bytes into records.
"""
