def load():
    raise ValueError("bad config: depth must be positive")


load()
