# A small pytest suite for the CI recipe (docs/ci.md): one test passes,
# one fails.


def average(xs):
    return sum(xs) // (len(xs) + 1)  # off by one


def test_sum():
    assert sum([1, 2, 3]) == 6


def test_average():
    assert average([2, 4, 6]) == 4
