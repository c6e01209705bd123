"""torch custom-op helper (CPU): ops defined with define_op pass torch.library.opcheck and trace under
torch.compile(fullgraph=True) (aot_eager backend: no C++ compiler needed)."""

from __future__ import annotations

import pytest
import torch

from vllm_humming.jit.torch_op import defined_ops, define_op, get_op


def _scale_cols_cpu(a, s, n: int):
    return (a[:, :n] * s[:n]).contiguous()


def _scale_cols_fake(a, s, n: int):
    return a.new_empty(a.shape[0], n)


def test_define_op_eager_opcheck_and_compile():
    op = define_op("test_scale_cols", "(Tensor a, Tensor s, int n) -> Tensor", cpu_impl=_scale_cols_cpu,
                   fake=_scale_cols_fake)
    assert op is torch.ops.humming.test_scale_cols and get_op("test_scale_cols") is op
    assert defined_ops()["test_scale_cols"] == "test_scale_cols(Tensor a, Tensor s, int n) -> Tensor"
    a, s = torch.randn(5, 8), torch.randn(8)
    torch.testing.assert_close(op(a, s, 6), a[:, :6] * s[:6])
    torch.library.opcheck(op, (a, s, 6))

    def f(x, y):
        return torch.relu(op(x, y, 6)) + 1

    g = torch.compile(f, fullgraph=True, backend="aot_eager", dynamic=True)
    torch.testing.assert_close(g(a, s), f(a, s))
    a2 = torch.randn(9, 8)  # another M: no graph break, same traced graph with a symbolic size
    torch.testing.assert_close(g(a2, s), f(a2, s))


def test_mutating_op_without_fake_and_redefinition():
    def fill_cpu(x, out):
        out.copy_(x * 3)

    op = define_op("test_fill3", "(Tensor x, Tensor(a!) out) -> ()", cpu_impl=fill_cpu)  # auto fake (returns ())
    x = torch.randn(4, 4)
    torch.library.opcheck(op, (x, torch.empty_like(x)))

    def h(v):
        o = torch.empty_like(v)
        op(v, o)
        return o + 1

    torch.testing.assert_close(torch.compile(h, fullgraph=True, backend="aot_eager")(x), x * 3 + 1)
    # same name + schema: implementations are replaced
    def fill5_cpu(x, out):
        out.copy_(x * 5)

    define_op("test_fill3", "test_fill3(Tensor x, Tensor(a!) out) -> ()", cpu_impl=fill5_cpu)
    o = torch.empty_like(x)
    op(x, o)
    torch.testing.assert_close(o, x * 5)
    with pytest.raises(ValueError, match="already defined with schema"):
        define_op("test_fill3", "(Tensor x) -> Tensor", cpu_impl=lambda x: x, fake=lambda x: x)


def test_define_op_rejects_bad_input():
    with pytest.raises(ValueError, match="fake"):
        define_op("test_nofake", "(Tensor x) -> Tensor", cpu_impl=lambda x: x)
    with pytest.raises(ValueError, match="at least one implementation"):
        define_op("test_noimpl", "(Tensor x) -> ()")
    with pytest.raises(ValueError, match="C identifier"):
        define_op("bad-name", "(Tensor x) -> ()", cpu_impl=lambda x: None)
    with pytest.raises(ValueError, match="names another operator"):
        define_op("test_named", "other(Tensor x) -> ()", cpu_impl=lambda x: None)
    with pytest.raises(KeyError, match="not defined"):
        get_op("test_never_defined")
