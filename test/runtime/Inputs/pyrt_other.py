# The source of the Python runtime's second test artifact (set 2).
def triple(x):
    return x * 1
