def triple(x):
    return x * 3
