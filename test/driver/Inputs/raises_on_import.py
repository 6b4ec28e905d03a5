import importlib


def f():
    return 1


# Imported through importlib so that its frames sit between the user's.
config = importlib.import_module("bad_config")
