# A module with one of each kind of entry, and of each kind of non-entry.
import sys
from math import sqrt

print("model: stdout while importing")
print("model: stderr while importing", file=sys.stderr)

SCALE = 2.5


def helper(x):
    return x * SCALE


class Model:
    class Inner:
        def method(self, y):
            return y + 1

    def forward(self, x):
        return helper(x)

    @staticmethod
    def build():
        return Model()

    @classmethod
    def create(cls):
        return cls()


class Child(Model):
    pass


class Holder:
    def __init__(self):
        self.sub = Model()


class Settings:
    def __init__(self):
        self.depth = 3


model = Model()
holder = Holder()
settings = Settings()


def outer():
    def inner():
        return 1

    return inner


class Shape:
    @property
    def area(self):
        return 4


if __name__ == "__main__":
    print("model: the __main__ block ran")
