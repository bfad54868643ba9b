"""Bad input in the Python API raises InputError naming the parameter (issue 23: these were accepted,
or raised ValueError / TypeError / OverflowError, or ran with 0 or 1 repetitions)."""
from fractions import Fraction

import pytest

import boundcalc as bc
from boundcalc.core.errors import InputError

CASES = [
    ("check reps=-5", lambda: bc.check("mean", "pure", reps=-5), "reps"),
    ("check reps=Fraction(1, 2)", lambda: bc.check("mean", "pure", reps=Fraction(1, 2)), "reps"),
    ("check reps=True", lambda: bc.check("mean", "pure", reps=True), "reps"),
    ("check reps=2.5", lambda: bc.check("mean", "pure", reps=2.5), "reps"),
    ("check seed=-1", lambda: bc.check("mean", "pure", seed=-1), "seed"),
    ("check ns=1.0", lambda: bc.check("mean", "pure", ns=1.0), "ns"),
    ("check ns=[1, 5]", lambda: bc.check("mean", "pure", ns=[1, 5]), "ns"),
    ("check ns='100,,200'", lambda: bc.check("mean", "pure", ns="100,,200"), "ns"),
    ("check ns=[100]", lambda: bc.check("mean", "pure", ns=[100]), "ns"),
    ("check n=5", lambda: bc.check("mean", "pure", n=5), "n"),
    ("evaluate_curve n='1000'", lambda: bc.evaluate_curve("mean", "pure", n="1000"), "n"),
    ("evaluate_curve n=10**400", lambda: bc.evaluate_curve("mean", "pure", n=10 ** 400), "n"),
    ("evaluate_curve n=True", lambda: bc.evaluate_curve("mean", "pure", n=True), "n"),
    ("evaluate_curve n=b'1000'", lambda: bc.evaluate_curve("mean", "pure", n=b"1000"), "n"),
    ("rate n=b'1000'", lambda: bc.rate("mean", "pure", n=b"1000"), "n"),
    ("rate n=bytearray", lambda: bc.rate("mean", "pure", n=bytearray(b"1000")), "n"),
    ("convert none eps=1", lambda: bc.convert("none", "pure", eps=1), "eps"),
    ("table mean,mean", lambda: bc.table("mean,mean"), "problem"),
    ("table privacy pure,", lambda: bc.table("mean", privacies="pure,"), "privacy"),
]


@pytest.mark.parametrize("call,param", [(c, p) for _, c, p in CASES], ids=[i for i, _, _ in CASES])
def test_input_error_names_the_parameter(call, param):
    with pytest.raises(InputError) as e:
        call()
    assert e.value.parameter == param


def test_evaluate_curve_still_takes_inf_and_choices():
    import numpy as np

    up = bc.evaluate_curve("mean", "pure", n=np.array([100.0, 1000.0]), k="inf")
    assert up.shape == (2,) and np.all(np.isfinite(up)) and up[1] < up[0]
