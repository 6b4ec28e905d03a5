"""Python's min and max over objects of the program's classes, end to end:
each comparison calls the class's __lt__ or __gt__, as CPython does. A
function computing torch.distributions' kl_divergence, exported cold (its
rule table's memo empty, so the rule is picked by min() of _Match
objects), and one picking by a version class's order, equal eager's for
other inputs than the example's, every call a hit."""
import textwrap

from conftest import compare_with_eager


MODEL = textwrap.dedent("""
    import torch
    from torch.distributions import Normal, kl_divergence


    class Version:
        def __init__(self, *parts):
            self.parts = parts

        def __lt__(self, other):
            return self.parts < other.parts

        def __gt__(self, other):
            return self.parts > other.parts


    def kl(loc, log_scale):
        return kl_divergence(Normal(loc, log_scale.exp()), Normal(torch.zeros_like(loc), 1.0)).sum(-1)


    def newest(x):
        versions = [Version(1, 4), Version(2, 0), Version(1, 9)]
        return x * min(versions).parts[1] + max(v for v in versions).parts[0]


    def example_inputs():
        return torch.randn(3, 4), torch.randn(3, 4)


    def newest_inputs():
        return (torch.randn(5),)
""")


def test_min_max_of_objects_as_eager(run_dync, tmp_path):
    (tmp_path / "ordered.py").write_text(MODEL.replace("def newest_inputs", "def _unused"))
    (tmp_path / "newest.py").write_text(MODEL.replace("def example_inputs", "def _unused")
                                        .replace("def newest_inputs", "def example_inputs"))
    for module, entry in (("ordered", "kl"), ("newest", "newest")):
        artifact = tmp_path / f"{module}.dync.so"
        exported = run_dync("export", f"{tmp_path / (module + '.py')}:{entry}", "-o", artifact)
        assert exported.returncode == 0, exported.stderr
        report = compare_with_eager(tmp_path, artifact, f"""
            import torch
            import {module} as m
            g = torch.Generator().manual_seed(3)
            shape = (3, 4) if {entry!r} == "kl" else (5,)
            args = [[torch.randn(*shape, generator=g) for _ in range(2 if {entry!r} == "kl" else 1)]
                    for _ in range(3)]
            calls = {{{entry!r}: lambda: [m.{entry}(*a) for a in args]}}
            """)
        assert report[entry] == [None, 3, 0, None], report
