"""``--moe-backend humming``: our classes in place of vLLM's ``Humming*Experts`` and its humming MoE helpers.

vLLM's MoE oracles (fp8, int8, int_wna16, nvfp4, mxfp4, mxfp8, w4a8) import ``HummingIndexedExperts``,
``HummingGroupedExperts`` and ``BatchedHummingGroupedExperts`` from
``vllm.model_executor.layers.fused_moe.experts.fused_humming_moe`` and convert weights with
``vllm.model_executor.layers.quantization.utils.humming.convert_to_humming_moe_kernel_format`` /
``get_humming_moe_quant_config`` -- all of which drive the upstream ``humming-kernels`` package.
:func:`install_moe_experts` replaces those five names with ours, so this route can never reach the upstream package.

STATUS: our fused-MoE GPU kernels do not exist yet, and the converters from each oracle's expert-tensor layouts are
not written yet.  Our experts therefore refuse loudly (:class:`HummingMoEBackendUnsupported`) when an oracle selects
them, naming the alternative that works today: ``--quantization humming``, whose MoE method runs every supported
checkpoint format through the plain-torch MoE fallback (:mod:`vllm_humming.moe.fallback`).
"""

from __future__ import annotations

from typing import Dict

__all__ = ["install_moe_experts", "HummingMoEBackendUnsupported", "OUR_EXPERTS"]

OUR_EXPERTS: Dict[str, type] = {}


class HummingMoEBackendUnsupported(NotImplementedError):
    pass


def _refuse(what: str):
    raise HummingMoEBackendUnsupported(
        f"vllm-humming: --moe-backend humming reached {what}, but vllm-humming has no fused-MoE kernel and no "
        f"converter for vLLM's per-oracle expert layouts yet (the upstream humming-kernels package is deliberately "
        f"not used). Serve the model with --quantization humming instead: its MoE method converts the checkpoint "
        f"experts itself and runs the plain-torch MoE fallback.")


def convert_to_humming_moe_kernel_format(layer, *args, **kwargs):
    _refuse("the MoE weight conversion (convert_to_humming_moe_kernel_format)")


def get_humming_moe_quant_config(layer, *args, **kwargs):
    _refuse("the MoE quant-config builder (get_humming_moe_quant_config)")


def _build(fh):
    out = {}
    for name in ("HummingIndexedExperts", "HummingGroupedExperts", "BatchedHummingGroupedExperts"):
        base = getattr(fh, name)

        def _init(self, *a, _n=name, **k):
            _refuse(f"the experts class {_n}")

        cls = type(name, (base,), {
            "__init__": _init,
            "__module__": __name__,
            "__doc__": f"vllm-humming replacement for vLLM's {name} (refuses; see module docstring).",
            # selectable on every device: the refusal must be what the user sees, not a silent fallback
            "_supports_current_device": staticmethod(lambda: True),
        })
        out[name] = cls
    return out


def install_moe_experts() -> Dict[str, type]:
    if OUR_EXPERTS:
        return OUR_EXPERTS
    import vllm.model_executor.layers.fused_moe.experts.fused_humming_moe as fh
    import vllm.model_executor.layers.quantization.utils.humming as hu

    ours = _build(fh)
    for n, c in ours.items():
        setattr(fh, n, c)
    hu.convert_to_humming_moe_kernel_format = convert_to_humming_moe_kernel_format
    hu.get_humming_moe_quant_config = get_humming_moe_quant_config
    OUR_EXPERTS.update(ours)
    return OUR_EXPERTS
