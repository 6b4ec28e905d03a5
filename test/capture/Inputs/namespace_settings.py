"""A one-line settings module whose namespace a program indexes."""
SCALE = 2.0
